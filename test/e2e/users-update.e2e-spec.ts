import { as, authHeader, createMembership, createSignedInUser, createUser, createUserType, DEFAULT_PASSWORD, eventsAbout, expectNoSecrets, putBodyOf, signIn, useInstallation, usersPath } from '../support/api';

/** The users API: update, own record, password change, freeze and activate, delete. (Split by behaviour; the other parts are users-create.e2e-spec.ts, users-read.e2e-spec.ts, users-custom-fields.e2e-spec.ts.) */
describe('users API', () => {
  const suite = useInstallation();
  const base = (): string => usersPath(suite.admin.membershipId);
  const { get, post, put, del } = as(() => suite.t, () => suite.admin);

  describe('update', () => {
    it('replaces the mutable fields, records UserUpdated with prior', async () => {
      const user = await createUser(suite.t, suite.admin, { firstname: 'Old', lastname: 'Name', permissions: ['webhooks.read'] });
      const res = await put(`${base()}/${user._id}`, putBodyOf(user, { firstname: 'New', lastname: null, role: 'admin', email_address: user.email_address.toUpperCase() }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ _id: user._id, firstname: 'New', lastname: null, role: 'admin', email_address: user.email_address, permissions: ['webhooks.read'] });
      expect(res.body.sys).toEqual({ created_at: user.sys.created_at, created_by: suite.admin.userId, modified_at: expect.any(String), modified_by: suite.admin.userId });

      const [event] = await eventsAbout(suite.t, suite.admin.membershipId, 'UserUpdated', user._id);
      expect(event.document).toEqual(res.body);
      expect(event.prior).toMatchObject({ _id: user._id, firstname: 'Old', lastname: 'Name', role: null });
      expectNoSecrets(event);
    });

    it('clears optional fields left out, keeps is_active when left out', async () => {
      const user = await createUser(suite.t, suite.admin, { firstname: 'F', role: 'admin', permissions: ['webhooks.read'], is_active: false });
      const res = await put(`${base()}/${user._id}`, { username: user.username, email_address: user.email_address });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ firstname: null, role: null, permissions: [], is_active: false });
    });

    it('answers 409 IdenticalDocumentError when nothing changes', async () => {
      const user = await createUser(suite.t, suite.admin, { firstname: 'Same' });
      const res = await put(`${base()}/${user._id}`, putBodyOf(user));
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ statusCode: 409, errorCode: 'IdenticalDocumentError', message: expect.any(String) });
    });

    it('refuses a password, server-managed fields, unknown fields and taken usernames', async () => {
      const user = await createUser(suite.t, suite.admin);
      const other = await createUser(suite.t, suite.admin);
      const password = await put(`${base()}/${user._id}`, putBodyOf(user, { password: 'a new password!' }));
      expect(password.status).toBe(400);
      expect(password.body.errors).toEqual([{ field: 'password', message: expect.stringMatching(/change-password/) }]);

      const managed = await put(`${base()}/${user._id}`, { ...putBodyOf(user), _id: 'x', sys: {} });
      expect(managed.status).toBe(400);
      expect(managed.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['_id', 'sys']);

      const unknown = await put(`${base()}/${user._id}`, putBodyOf(user, { nickname: 'x' }));
      expect(unknown.status).toBe(400);
      expect(unknown.body.errors).toEqual([{ field: 'nickname', message: expect.any(String) }]);

      const taken = await put(`${base()}/${user._id}`, putBodyOf(user, { username: other.username }));
      expect(taken.status).toBe(409);
      expect(taken.body.errorCode).toBe('UserAlreadyExists');

      const badPermission = await put(`${base()}/${user._id}`, putBodyOf(user, { forbidden: ['**'] }));
      expect(badPermission.status).toBe(400);
      expect(badPermission.body.errorCode).toBe('InvalidPermission');

      const badRole = await put(`${base()}/${user._id}`, putBodyOf(user, { role: 'ghost' }));
      expect(badRole.status).toBe(400);
      expect(badRole.body.errors).toEqual([{ field: 'role', message: expect.any(String) }]);

      const missing = await put(`${base()}/no-such-user`, putBodyOf(user));
      expect(missing.status).toBe(404);
      expect(missing.body.errorCode).toBe('UserNotFound');
    });
  });

  describe('own record', () => {
    it('lets a user read itself but no one else', async () => {
      const { user, session } = await createSignedInUser(suite.t, suite.admin);
      const self = await suite.t.http().get(`${base()}/${user._id}`).set(authHeader(session));
      expect(self.status).toBe(200);
      expect(self.body._id).toBe(user._id);
      const other = await suite.t.http().get(`${base()}/${suite.admin.userId}`).set(authHeader(session));
      expect(other.status).toBe(403);
      expect(other.body.errorCode).toBe('AccessDenied');
    });

    it('lets a user change its own names and custom fields', async () => {
      const type = await createUserType(suite.t, suite.admin, { properties: { nickname: { type: 'string' } } });
      const { user, session } = await createSignedInUser(suite.t, suite.admin, { user_type: type.slug, firstname: 'Me', role: 'admin' });
      const res = await suite.t
        .http()
        .put(`${base()}/${user._id}`)
        .set(authHeader(session))
        .send(putBodyOf(user, { firstname: 'Myself', lastname: 'Too', nickname: 'me' }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ firstname: 'Myself', lastname: 'Too', nickname: 'me', role: 'admin' });
      const [event] = await eventsAbout(suite.t, suite.admin.membershipId, 'UserUpdated', user._id);
      expect(event.utilizerId).toBe(user._id);
    });

    it.each([
      ['role', { role: 'admin' }],
      ['permissions', { permissions: ['users.*'] }],
      ['forbidden', { forbidden: ['events.read'] }],
      ['is_active', { is_active: false }],
      ['username', { username: 'renamed-self' }],
      ['email_address', { email_address: 'renamed-self@example.com' }],
    ])('refuses a self-change of %s without users.update: 403', async (field, overrides) => {
      const type = await createUserType(suite.t, suite.admin, { properties: {} });
      const { user, session } = await createSignedInUser(suite.t, suite.admin, { forbidden: ['webhooks.delete'] });
      const res = await suite.t
        .http()
        .put(`${base()}/${user._id}`)
        .set(authHeader(session))
        .send(putBodyOf(user, { firstname: 'Also', ...overrides }));
      expect(res.status).toBe(403);
      expect(res.body.errorCode).toBe('AccessDenied');
      expect(res.body.message).toContain(field);
      const typeChange = await suite.t
        .http()
        .put(`${base()}/${user._id}`)
        .set(authHeader(session))
        .send(putBodyOf(user, { user_type: type.slug }));
      expect(typeChange.status).toBe(403);
      const unchanged = await get(`${base()}/${user._id}`);
      expect(unchanged.body).toMatchObject({ firstname: null, role: null, forbidden: ['webhooks.delete'], is_active: true });
    });

    it('lets a user with users.update on itself change privileged fields', async () => {
      const { user } = await createUser(suite.t, suite.admin, { permissions: [] }).then((u) => ({ user: u }));
      const promoted = await put(`${base()}/${user._id}`, putBodyOf(user, { permissions: [`users.update.${user._id}`] }));
      expect(promoted.status).toBe(200);
      const session = await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
      const res = await suite.t
        .http()
        .put(`${base()}/${user._id}`)
        .set(authHeader(session))
        .send(putBodyOf(promoted.body, { forbidden: ['events.read'] }));
      expect(res.status).toBe(200);
      expect(res.body.forbidden).toEqual(['events.read']);
    });

    it('does not let a user activate, freeze, delete or update anyone else', async () => {
      const { user, session } = await createSignedInUser(suite.t, suite.admin);
      const victim = await createUser(suite.t, suite.admin);
      for (const action of ['activate', 'freeze']) {
        const self = await suite.t.http().post(`${base()}/${user._id}/${action}`).set(authHeader(session));
        expect(self.status).toBe(403);
        const other = await suite.t.http().post(`${base()}/${victim._id}/${action}`).set(authHeader(session));
        expect(other.status).toBe(403);
      }
      const update = await suite.t.http().put(`${base()}/${victim._id}`).set(authHeader(session)).send(putBodyOf(victim, { firstname: 'x' }));
      expect(update.status).toBe(403);
      const remove = await suite.t.http().delete(`${base()}/${user._id}`).set(authHeader(session));
      expect(remove.status).toBe(403);
      const password = await suite.t.http().put(`${base()}/${victim._id}/change-password`).set(authHeader(session)).send({ password: 'hijacked password' });
      expect(password.status).toBe(403);
    });
  });

  describe('change-password', () => {
    it('lets users change their own password: this session survives, the others are revoked', async () => {
      const { user, session: current } = await createSignedInUser(suite.t, suite.admin);
      const otherDevice = await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
      const res = await suite.t.http().put(`${base()}/${user._id}/change-password`).set(authHeader(current)).send({ current_password: user.password, password: 'my brand new password' });
      expect(res.status).toBe(204);

      expect((await suite.t.http().get(`${base()}/${user._id}`).set(authHeader(current))).status).toBe(200);
      const revoked = await suite.t.http().get(`${base()}/${user._id}`).set(authHeader(otherDevice));
      expect(revoked.status).toBe(401);
      expect(revoked.body.errorCode).toBe('TokenWasRevoked');
      const refresh = await suite.t.http().post('/refresh-token').send({ token: otherDevice.refreshToken });
      expect(refresh.status).toBe(401);

      const oldPassword = await suite.t.http().post('/generate-token').set('X-Service-Alias', suite.admin.membershipId).send({ username: user.username, password: user.password });
      expect(oldPassword.status).toBe(401);
      expect(oldPassword.body.errorCode).toBe('InvalidCredentials');
      await signIn(suite.t, suite.admin.membershipId, user.username, 'my brand new password');

      const [changed] = await eventsAbout(suite.t, suite.admin.membershipId, 'UserPasswordChanged', user._id);
      expect(changed.utilizerId).toBe(user._id);
      expectNoSecrets(changed);
      const revokedEvents = await eventsAbout(suite.t, suite.admin.membershipId, 'TokenRevoked', user._id);
      expect(revokedEvents).toHaveLength(1);
    });

    it('revokes every session of the user when an admin changes the password', async () => {
      const { user, session: first } = await createSignedInUser(suite.t, suite.admin);
      const second = await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
      const res = await put(`${base()}/${user._id}/change-password`, { password: 'set by the admin' });
      expect(res.status).toBe(204);
      for (const session of [first, second]) {
        const r = await suite.t.http().get(`${base()}/${user._id}`).set(authHeader(session));
        expect(r.status).toBe(401);
        expect(r.body.errorCode).toBe('TokenWasRevoked');
      }
      expect((await get(base())).status).toBe(200);
      await signIn(suite.t, suite.admin.membershipId, user.username, 'set by the admin');
    });

    it('validates the new password before hashing; unknown user is 404', async () => {
      const user = await createUser(suite.t, suite.admin);
      for (const body of [{}, { password: 'short' }, { password: 'p'.repeat(10 * 1024) }, { password: 12345678 }, { password: DEFAULT_PASSWORD, extra: 1 }]) {
        const res = await put(`${base()}/${user._id}/change-password`, body);
        expect(res.status).toBe(400);
        expect(res.body.errorCode).toBe('ModelValidationError');
      }
      const missing = await put(`${base()}/no-such-user/change-password`, { password: DEFAULT_PASSWORD });
      expect(missing.status).toBe(404);
      expect(missing.body.errorCode).toBe('UserNotFound');
    });
  });

  describe('freeze and activate', () => {
    it('freezes a user: its tokens answer 401 at once and sign-in answers UserInactive', async () => {
      const { user, session } = await createSignedInUser(suite.t, suite.admin);
      const res = await post(`${base()}/${user._id}/freeze`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ _id: user._id, is_active: false });

      const access = await suite.t.http().get(`${base()}/${user._id}`).set(authHeader(session));
      expect(access.status).toBe(401);
      const me = await suite.t.http().get('/me').set(authHeader(session));
      expect(me.status).toBe(401);
      const refresh = await suite.t.http().post('/refresh-token').send({ token: session.refreshToken });
      expect(refresh.status).toBe(401);

      const signInRight = await suite.t.http().post('/generate-token').set('X-Service-Alias', suite.admin.membershipId).send({ username: user.username, password: user.password });
      expect(signInRight.status).toBe(401);
      expect(signInRight.body.errorCode).toBe('UserInactive');
      const signInWrong = await suite.t.http().post('/generate-token').set('X-Service-Alias', suite.admin.membershipId).send({ username: user.username, password: 'wrong password!' });
      expect(signInWrong.status).toBe(401);
      expect(signInWrong.body.errorCode).toBe('InvalidCredentials');

      const [updated] = await eventsAbout(suite.t, suite.admin.membershipId, 'UserUpdated', user._id);
      expect(updated.prior).toMatchObject({ is_active: true });
      expect(updated.document).toMatchObject({ is_active: false });
      expect(await eventsAbout(suite.t, suite.admin.membershipId, 'TokenRevoked', user._id)).toHaveLength(1);
    });

    it('activates a frozen user; both actions are idempotent', async () => {
      const user = await createUser(suite.t, suite.admin);
      await post(`${base()}/${user._id}/freeze`).expect(200);
      const again = await post(`${base()}/${user._id}/freeze`);
      expect(again.status).toBe(200);
      expect(again.body.is_active).toBe(false);

      const res = await post(`${base()}/${user._id}/activate`);
      expect(res.status).toBe(200);
      expect(res.body.is_active).toBe(true);
      await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
      const activeAgain = await post(`${base()}/${user._id}/activate`);
      expect(activeAgain.status).toBe(200);

      const events = await eventsAbout(suite.t, suite.admin.membershipId, 'UserUpdated', user._id);
      expect(events.map((e) => (e.document as { is_active: boolean }).is_active)).toEqual([false, true]);
    });

    it('answers 404 for an unknown user', async () => {
      for (const action of ['freeze', 'activate']) {
        const res = await post(`${base()}/no-such-user/${action}`);
        expect(res.status).toBe(404);
        expect(res.body.errorCode).toBe('UserNotFound');
      }
    });
  });

  describe('delete', () => {
    it('deletes a user: 204, then 404; its tokens stop working; UserDeleted and TokenRevoked events', async () => {
      const { user, session } = await createSignedInUser(suite.t, suite.admin);
      const res = await del(`${base()}/${user._id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await get(`${base()}/${user._id}`)).status).toBe(404);
      const again = await del(`${base()}/${user._id}`);
      expect(again.status).toBe(404);
      expect(again.body.errorCode).toBe('UserNotFound');
      expect((await suite.t.http().get('/me').set(authHeader(session))).status).toBe(401);

      const [deleted] = await eventsAbout(suite.t, suite.admin.membershipId, 'UserDeleted', user._id);
      expect(deleted.document).toEqual({});
      expect(deleted.prior).toMatchObject({ _id: user._id, username: user.username });
      expectNoSecrets(deleted);
      expect(await eventsAbout(suite.t, suite.admin.membershipId, 'TokenRevoked', user._id)).toHaveLength(1);
    });

    it('bulk-deletes own ids; foreign and unknown ids are not found', async () => {
      const a = await createUser(suite.t, suite.admin);
      const b = await createUser(suite.t, suite.admin);
      const other = await createMembership(suite.t, suite.admin);
      const res = await del(base(), { ids: [a._id, other.admin.userId, b._id, 'no-such-user', a._id] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ deleted: [a._id, b._id], not_found: [other.admin.userId, 'no-such-user'] });
      expect((await suite.t.http().get(`${usersPath(other.membershipId)}/${other.admin.userId}`).set(authHeader(other.admin))).status).toBe(200);
      expect(await eventsAbout(suite.t, suite.admin.membershipId, 'UserDeleted', a._id)).toHaveLength(1);
      expect(await eventsAbout(suite.t, suite.admin.membershipId, 'UserDeleted', b._id)).toHaveLength(1);
    });

    it.each([[{}], [{ ids: [] }], [{ ids: 'x' }], [{ ids: [1] }], [{ ids: Array.from({ length: 1001 }, (_, i) => `id${i}`) }]])(
      'refuses the bulk body %#: 400',
      async (body) => {
        const res = await del(base(), body);
        expect(res.status).toBe(400);
        expect(res.body.errorCode).toBe('ModelValidationError');
      },
    );
  });
});
