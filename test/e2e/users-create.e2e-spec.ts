import { PasswordHasher } from '../../src/users/password-hasher';
import { as, authHeader, createMembership, createSignedInUser, createUser, DEFAULT_PASSWORD, eventsAbout, expectFieldRefused, expectNoSecrets, signIn, unique, useInstallation, userBody, usersPath } from '../support/api';

/** The users API: create, uniqueness, validation and the membership's user_activation. (Split by behaviour; the other parts are users-read.e2e-spec.ts, users-update.e2e-spec.ts, users-custom-fields.e2e-spec.ts.) */
describe('users API', () => {
  const suite = useInstallation();
  const base = (): string => usersPath(suite.admin.membershipId);
  const { post } = as(() => suite.t, () => suite.admin);

  describe('create', () => {
    it('creates a user: 201, e-mail stored lower case, no secrets, UserCreated event', async () => {
      const username = unique('Create');
      const res = await post(base(), {
        username,
        email_address: `${username}@Example.COM`,
        password: DEFAULT_PASSWORD,
        firstname: 'Grace',
        lastname: 'Hopper',
        role: 'admin',
        permissions: ['webhooks.read', 'events.read.abc'],
        forbidden: ['users.delete'],
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        _id: expect.any(String),
        username,
        firstname: 'Grace',
        lastname: 'Hopper',
        email_address: `${username.toLowerCase()}@example.com`,
        role: 'admin',
        user_type: null,
        permissions: ['webhooks.read', 'events.read.abc'],
        forbidden: ['users.delete'],
        is_active: true,
        source_provider: null,
        membership_id: suite.admin.membershipId,
        sys: { created_at: expect.any(String), created_by: suite.admin.userId },
      });
      expectNoSecrets(res.body);

      const [event] = await eventsAbout(suite.t, suite.admin.membershipId, 'UserCreated', res.body._id);
      expect(event.utilizerId).toBe(suite.admin.userId);
      expect(event.document).toEqual(res.body);
      expect(event.prior).toBeNull();
      expectNoSecrets(event.document);

      const signedIn = await signIn(suite.t, suite.admin.membershipId, username.toUpperCase(), DEFAULT_PASSWORD);
      expect(signedIn.accessToken).toBeTruthy();
    });

    it('creates a user with an application (Basic) caller', async () => {
      const res = await suite.t.http().post(base()).set(authHeader(suite.inst.application.basic)).send(userBody());
      expect(res.status).toBe(201);
      expect(res.body.sys.created_by).toBe(suite.inst.application.id);
    });

    it('refuses a duplicate username or e-mail address, whatever the case: 409 UserAlreadyExists', async () => {
      const first = await createUser(suite.t, suite.admin);
      const sameName = await post(base(), userBody({ username: first.username.toUpperCase() }));
      expect(sameName.status).toBe(409);
      expect(sameName.body).toEqual({ statusCode: 409, errorCode: 'UserAlreadyExists', message: expect.any(String) });

      const sameMail = await post(base(), userBody({ email_address: first.email_address.toUpperCase() }));
      expect(sameMail.status).toBe(409);
      expect(sameMail.body.errorCode).toBe('UserAlreadyExists');

      // Sign-in takes either, so one user's username cannot be another's e-mail address.
      const crossed = await post(base(), userBody({ username: first.email_address }));
      expect(crossed.status).toBe(409);
      expect(crossed.body.errorCode).toBe('UserAlreadyExists');
    });

    it('lets ten concurrent creates of one username produce exactly one user', async () => {
      const username = unique('race');
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          post(base(), { username, email_address: `${username}-${i}@example.com`, password: DEFAULT_PASSWORD }),
        ),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      for (const r of results.filter((res) => res.status !== 201)) {
        expect(r.status).toBe(409);
        expect(r.body.errorCode).toBe('UserAlreadyExists');
      }
    });

    it.each([
      ['username missing', { username: undefined }, 'username'],
      ['username with spaces', { username: 'a b' }, 'username'],
      ['username too long', { username: 'a'.repeat(129) }, 'username'],
      ['email missing', { email_address: undefined }, 'email_address'],
      ['email malformed', { email_address: 'not-an-address' }, 'email_address'],
      ['password missing', { password: undefined }, 'password'],
      ['password of 7 characters', { password: '1234567' }, 'password'],
      ['password of 257 characters', { password: 'p'.repeat(257) }, 'password'],
      ['password not a string', { password: 12345678 }, 'password'],
      ['firstname not a string', { firstname: 5 }, 'firstname'],
      ['lastname too long', { lastname: 'l'.repeat(129) }, 'lastname'],
      ['is_active not boolean', { is_active: 'yes' }, 'is_active'],
      ['permissions not an array', { permissions: 'users.read' }, 'permissions'],
      ['unknown field without a user type', { shoe_size: 44 }, 'shoe_size'],
      ['server-managed _id', { _id: 'mine' }, '_id'],
      ['server-managed sys', { sys: { created_by: 'me' } }, 'sys'],
      ['server-managed membership_id', { membership_id: 'other' }, 'membership_id'],
      ['server-managed source_provider', { source_provider: 'google' }, 'source_provider'],
      ['password_hash', { password_hash: '$argon2id$v=19$m=1,t=1,p=1$x$y' }, 'password_hash'],
      ['role that does not exist', { role: 'no-such-role' }, 'role'],
      ['user_type that does not exist', { user_type: 'no-such-type' }, 'user_type'],
    ])('refuses a body with %s: 400 ModelValidationError naming the field', async (_case, overrides, field) => {
      const res = await post(base(), userBody(overrides));
      expectFieldRefused(res, field);
    });

    it('refuses a __proto__ or constructor field without touching any prototype', async () => {
      const body = `{"username":"${unique('proto')}","email_address":"${unique('p')}@example.com","password":"${DEFAULT_PASSWORD}","__proto__":{"role":"admin"},"constructor":{"x":1}}`;
      const res = await suite.t.http().post(base()).set(authHeader(suite.admin)).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(expect.arrayContaining(['__proto__', 'constructor']));
    });

    it('refuses a body that is not a JSON object', async () => {
      const res = await post(base(), [userBody()]);
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
    });

    it('refuses a 10 KB password with a 400 before any hashing', async () => {
      const hashing = jest.spyOn(suite.t.app.get(PasswordHasher), 'hash');
      try {
        const res = await post(base(), userBody({ password: 'p'.repeat(10 * 1024) }));
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ field: 'password', message: expect.stringMatching(/256/) }]);
        expect(hashing).not.toHaveBeenCalled();
      } finally {
        hashing.mockRestore();
      }
    });

    it('refuses invalid permission and forbidden entries: 400 InvalidPermission naming each', async () => {
      const res = await post(base(), userBody({ permissions: ['users.read', 'users read', 5], forbidden: ['a.b.c.d.e'] }));
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('InvalidPermission');
      expect(res.body.errors).toEqual([
        { field: 'permissions.1', message: expect.any(String) },
        { field: 'permissions.2', message: expect.any(String) },
      ]);
      const forbidden = await post(base(), userBody({ forbidden: ['users.*', 'us*rs'] }));
      expect(forbidden.status).toBe(400);
      expect(forbidden.body.errorCode).toBe('InvalidPermission');
      expect(forbidden.body.errors).toEqual([{ field: 'forbidden.1', message: expect.any(String) }]);
    });

    it('honours is_active given on create', async () => {
      const user = await createUser(suite.t, suite.admin, { is_active: false });
      expect(user.is_active).toBe(false);
      const res = await suite.t.http().post('/generate-token').set('X-Service-Alias', suite.admin.membershipId).send({ username: user.username, password: user.password });
      expect(res.status).toBe(401);
      expect(res.body.errorCode).toBe('UserInactive');
    });

    it('gives a user the permissions of a role created through the roles API', async () => {
      const role = await post(`/memberships/${suite.admin.membershipId}/roles`, { name: unique('Viewer'), permissions: ['users.read'] });
      expect(role.status).toBe(201);
      const { user, session } = await createSignedInUser(suite.t, suite.admin, { role: role.body.slug });
      expect(user.role).toBe(role.body.slug);
      expect((await suite.t.http().get(base()).set(authHeader(session))).status).toBe(200);
      expect((await suite.t.http().post(base()).set(authHeader(session)).send(userBody())).status).toBe(403);
    });

    it('needs users.create', async () => {
      const { session } = await createSignedInUser(suite.t, suite.admin);
      const res = await suite.t.http().post(base()).set(authHeader(session)).send(userBody());
      expect(res.status).toBe(403);
      expect(res.body.errorCode).toBe('AccessDenied');
    });
  });

  describe('membership user_activation', () => {
    it('starts new users inactive in a passive membership, active again once it is active', async () => {
      const other = await createMembership(suite.t, suite.admin, { user_activation: 'passive' });
      const otherBase = usersPath(other.membershipId);
      const passive = await suite.t.http().post(otherBase).set(authHeader(other.admin)).send(userBody());
      expect(passive.status).toBe(201);
      expect(passive.body.is_active).toBe(false);
      const explicit = await suite.t.http().post(otherBase).set(authHeader(other.admin)).send(userBody({ is_active: true }));
      expect(explicit.body.is_active).toBe(true);

      const membership = await suite.t.http().get(`/memberships/${other.membershipId}`).set(authHeader(other.admin));
      const put = await suite.t
        .http()
        .put(`/memberships/${other.membershipId}`)
        .set(authHeader(other.admin))
        .send({ name: membership.body.name, slug: membership.body.slug, user_activation: 'active' });
      expect(put.status).toBe(200);
      const active = await suite.t.http().post(otherBase).set(authHeader(other.admin)).send(userBody());
      expect(active.status).toBe(201);
      expect(active.body.is_active).toBe(true);
    });
  });
});
