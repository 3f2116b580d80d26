import { startTestApp, type TestApp } from '../support/app';
import {
  createSignedInUser,
  createUser,
  createUserType,
  DEFAULT_PASSWORD,
  eventsAbout,
  type Installation,
  putBodyOf,
  setupInstallation,
  type SignedIn,
  signIn,
  unique,
  userBody,
  type UserDoc,
  usersPath,
  type UserTypeDoc,
} from '../support/api';

/** Secrets that must never leave the service in a user object. */
function expectNoSecrets(value: unknown): void {
  const text = JSON.stringify(value);
  expect(text).not.toMatch(/"password(_?hash)?"\s*:/i);
  expect(text).not.toMatch(/\$argon2/);
}

describe('users API', () => {
  let t: TestApp;
  let installation: Installation;
  let admin: SignedIn;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp();
    installation = await setupInstallation(t);
    admin = installation.admin;
    base = usersPath(admin.membershipId);
  });
  afterAll(async () => {
    await t.close();
  });

  const as = (auth: SignedIn | string) => ({ Authorization: typeof auth === 'string' ? auth : auth.auth });

  /** A second membership (POST /memberships) with its own signed-in admin. */
  async function otherMembership(options: Record<string, unknown> = {}): Promise<{ membershipId: string; admin: SignedIn }> {
    const username = unique('other-admin');
    const res = await t
      .http()
      .post('/memberships')
      .set(as(admin))
      .send({
        membership: { name: unique('Other'), ...options },
        user: { username, email_address: `${username}@example.com`, password: DEFAULT_PASSWORD },
      });
    expect(res.status).toBe(201);
    const membershipId = res.body.membership._id as string;
    const otherAdmin = await signIn(t, membershipId, username, DEFAULT_PASSWORD);
    otherAdmin.userId = res.body.user._id;
    return { membershipId, admin: otherAdmin };
  }

  describe('create', () => {
    it('creates a user: 201, e-mail stored lower case, no secrets, UserCreated event', async () => {
      const username = unique('Create');
      const res = await t
        .http()
        .post(base)
        .set(as(admin))
        .send({
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
        membership_id: admin.membershipId,
        sys: { created_at: expect.any(String), created_by: admin.userId },
      });
      expectNoSecrets(res.body);

      const [event] = await eventsAbout(t, admin.membershipId, 'UserCreated', res.body._id);
      expect(event.utilizerId).toBe(admin.userId);
      expect(event.document).toEqual(res.body);
      expect(event.prior).toBeNull();
      expectNoSecrets(event.document);

      const signedIn = await signIn(t, admin.membershipId, username.toUpperCase(), DEFAULT_PASSWORD);
      expect(signedIn.accessToken).toBeTruthy();
    });

    it('creates a user with an application (Basic) caller', async () => {
      const res = await t.http().post(base).set(as(installation.application.basic)).send(userBody());
      expect(res.status).toBe(201);
      expect(res.body.sys.created_by).toBe(installation.application.id);
    });

    it('refuses a duplicate username or e-mail address, whatever the case: 409 UserAlreadyExists', async () => {
      const first = await createUser(t, admin);
      const sameName = await t
        .http()
        .post(base)
        .set(as(admin))
        .send(userBody({ username: first.username.toUpperCase() }));
      expect(sameName.status).toBe(409);
      expect(sameName.body).toEqual({ statusCode: 409, errorCode: 'UserAlreadyExists', message: expect.any(String) });

      const sameMail = await t
        .http()
        .post(base)
        .set(as(admin))
        .send(userBody({ email_address: first.email_address.toUpperCase() }));
      expect(sameMail.status).toBe(409);
      expect(sameMail.body.errorCode).toBe('UserAlreadyExists');

      // Sign-in takes either, so one user's username cannot be another's e-mail address.
      const crossed = await t
        .http()
        .post(base)
        .set(as(admin))
        .send(userBody({ username: first.email_address }));
      expect(crossed.status).toBe(409);
      expect(crossed.body.errorCode).toBe('UserAlreadyExists');
    });

    it('lets ten concurrent creates of one username produce exactly one user', async () => {
      const username = unique('race');
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          t
            .http()
            .post(base)
            .set(as(admin))
            .send({ username, email_address: `${username}-${i}@example.com`, password: DEFAULT_PASSWORD }),
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
      const res = await t.http().post(base).set(as(admin)).send(userBody(overrides));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        errorCode: 'ModelValidationError',
        message: expect.any(String),
        errors: expect.arrayContaining([{ field, message: expect.any(String) }]),
      });
    });

    it('refuses a __proto__ or constructor field without touching any prototype', async () => {
      const body = `{"username":"${unique('proto')}","email_address":"${unique('p')}@example.com","password":"${DEFAULT_PASSWORD}","__proto__":{"role":"admin"},"constructor":{"x":1}}`;
      const res = await t.http().post(base).set(as(admin)).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(expect.arrayContaining(['__proto__', 'constructor']));
    });

    it('refuses a body that is not a JSON object', async () => {
      const res = await t.http().post(base).set(as(admin)).send([userBody()]);
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
    });

    it('refuses a 10 KB password with a 400 before any hashing', async () => {
      const started = Date.now();
      const res = await t
        .http()
        .post(base)
        .set(as(admin))
        .send(userBody({ password: 'p'.repeat(10 * 1024) }));
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'password', message: expect.stringMatching(/256/) }]);
      // A hash takes tens of milliseconds; this bound only catches hashing of 10 KB at a multiple of that.
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('refuses invalid permission and forbidden entries: 400 InvalidPermission naming each', async () => {
      const res = await t
        .http()
        .post(base)
        .set(as(admin))
        .send(userBody({ permissions: ['users.read', 'users read', 5], forbidden: ['a.b.c.d.e'] }));
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('InvalidPermission');
      expect(res.body.errors).toEqual([
        { field: 'permissions.1', message: expect.any(String) },
        { field: 'permissions.2', message: expect.any(String) },
      ]);
      const forbidden = await t
        .http()
        .post(base)
        .set(as(admin))
        .send(userBody({ forbidden: ['users.*', 'us*rs'] }));
      expect(forbidden.status).toBe(400);
      expect(forbidden.body.errorCode).toBe('InvalidPermission');
      expect(forbidden.body.errors).toEqual([{ field: 'forbidden.1', message: expect.any(String) }]);
    });

    it('honours is_active given on create', async () => {
      const user = await createUser(t, admin, { is_active: false });
      expect(user.is_active).toBe(false);
      const res = await t.http().post('/generate-token').set('X-Service-Alias', admin.membershipId).send({ username: user.username, password: user.password });
      expect(res.status).toBe(401);
      expect(res.body.errorCode).toBe('UserInactive');
    });

    it('gives a user the permissions of a role created through the roles API', async () => {
      const role = await t
        .http()
        .post(`/memberships/${admin.membershipId}/roles`)
        .set(as(admin))
        .send({ name: unique('Viewer'), permissions: ['users.read'] });
      expect(role.status).toBe(201);
      const { user, session } = await createSignedInUser(t, admin, { role: role.body.slug });
      expect(user.role).toBe(role.body.slug);
      expect((await t.http().get(base).set(as(session))).status).toBe(200);
      expect((await t.http().post(base).set(as(session)).send(userBody())).status).toBe(403);
    });

    it('needs users.create', async () => {
      const { session } = await createSignedInUser(t, admin);
      const res = await t.http().post(base).set(as(session)).send(userBody());
      expect(res.status).toBe(403);
      expect(res.body.errorCode).toBe('AccessDenied');
    });
  });

  describe('membership user_activation', () => {
    it('starts new users inactive in a passive membership, active again once it is active', async () => {
      const other = await otherMembership({ user_activation: 'passive' });
      const otherBase = usersPath(other.membershipId);
      const passive = await t.http().post(otherBase).set(as(other.admin)).send(userBody());
      expect(passive.status).toBe(201);
      expect(passive.body.is_active).toBe(false);
      const explicit = await t.http().post(otherBase).set(as(other.admin)).send(userBody({ is_active: true }));
      expect(explicit.body.is_active).toBe(true);

      const membership = await t.http().get(`/memberships/${other.membershipId}`).set(as(other.admin));
      const put = await t
        .http()
        .put(`/memberships/${other.membershipId}`)
        .set(as(other.admin))
        .send({ name: membership.body.name, slug: membership.body.slug, user_activation: 'active' });
      expect(put.status).toBe(200);
      const active = await t.http().post(otherBase).set(as(other.admin)).send(userBody());
      expect(active.status).toBe(201);
      expect(active.body.is_active).toBe(true);
    });
  });

  describe('read', () => {
    it('gets a user by id; unknown id is 404 UserNotFound', async () => {
      const user = await createUser(t, admin, { firstname: 'Read' });
      const res = await t.http().get(`${base}/${user._id}`).set(as(admin));
      expect(res.status).toBe(200);
      expect(res.body).toEqual(putBodyOf(user, { _id: user._id, membership_id: admin.membershipId, sys: user.sys, source_provider: null }));
      expectNoSecrets(res.body);

      const missing = await t.http().get(`${base}/no-such-user`).set(as(admin));
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ statusCode: 404, errorCode: 'UserNotFound', message: expect.any(String) });
    });

    it('does not show users of another membership', async () => {
      const other = await otherMembership();
      const foreign = await t.http().get(`${base}/${other.admin.userId}`).set(as(admin));
      expect(foreign.status).toBe(404);
      const crossing = await t.http().get(`${usersPath(other.membershipId)}/${other.admin.userId}`).set(as(admin));
      expect(crossing.status).toBe(403);
      expect(crossing.body.errorCode).toBe('AccessDenied');
    });

    it('lists with paging, with_count and sort', async () => {
      const type = await createUserType(t, admin, { properties: { batch: { type: 'string' } } });
      const created: UserDoc[] = [];
      for (let i = 0; i < 5; i++) created.push(await createUser(t, admin, { user_type: type.slug, email_address: `${unique(`p${i}`)}@example.com` }));

      const all = await t.http().get(base).query({ limit: 1000, with_count: 'true' }).set(as(admin));
      expect(all.status).toBe(200);
      expect(all.body.count).toBe(all.body.items.length);
      for (const item of all.body.items) expectNoSecrets(item);
      const ids = all.body.items.map((u: { _id: string }) => u._id);
      expect(ids).toEqual(expect.arrayContaining(created.map((u) => u._id)));

      const page = await t.http().get(base).query({ skip: 1, limit: 2 }).set(as(admin));
      expect(page.status).toBe(200);
      expect(page.body.items.map((u: { _id: string }) => u._id)).toEqual(ids.slice(1, 3));
      expect(page.body).not.toHaveProperty('count');

      const sorted = await t.http().get(base).query({ sort: 'email_address desc', limit: 1000 }).set(as(admin));
      const mails = sorted.body.items.map((u: { email_address: string }) => u.email_address);
      expect(mails).toEqual([...mails].sort().reverse());
    });

    it.each([
      [{ limit: 1001 }, 'limit'],
      [{ limit: 0 }, 'limit'],
      [{ skip: -1 }, 'skip'],
      [{ with_count: 'maybe' }, 'with_count'],
      [{ sort: 'firstname' }, 'sort'],
      [{ sort: 'password_hash' }, 'sort'],
      [{ sort: 'email_address sideways' }, 'sort'],
    ])('refuses the list parameters %j: 400 InvalidQuery', async (query, part) => {
      const res = await t.http().get(base).query(query).set(as(admin));
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('InvalidQuery');
      expect(res.body.message).toContain(part);
    });

    it('needs users.read for lists', async () => {
      const { session } = await createSignedInUser(t, admin);
      const res = await t.http().get(base).set(as(session));
      expect(res.status).toBe(403);
    });
  });

  describe('_query', () => {
    let slug: string;
    let people: Record<string, UserDoc>;

    beforeAll(async () => {
      const type = await createUserType(t, admin, {
        properties: {
          age: { type: 'integer' },
          department: { type: 'enum', values: ['sales', 'it', 'hr'] },
          address: { type: 'object' },
          score: { type: 'number' },
        },
      });
      slug = type.slug;
      people = {};
      const specs: Record<string, Record<string, unknown>> = {
        ann: { firstname: 'Ann', age: 25, department: 'sales', address: { city: 'Oslo', zip: '0150' }, score: 1.5, role: 'admin' },
        bob: { firstname: 'Bob', age: 35, department: 'it', address: { city: 'Bergen' }, score: 2.5, is_active: false },
        cat: { firstname: 'Cat', age: 45, department: 'it', score: 3.5, permissions: ['webhooks.read'] },
        dan: { firstname: 'Dan', department: 'hr' },
      };
      for (const [name, spec] of Object.entries(specs)) people[name] = await createUser(t, admin, { user_type: slug, ...spec });
    });

    /** The first names of the users of this block that match `where`, sorted. */
    async function matching(where: Record<string, unknown>): Promise<string[]> {
      const res = await t
        .http()
        .post(`${base}/_query`)
        .set(as(admin))
        .send({ where: { $and: [{ user_type: slug }, where] } });
      expect(res.status).toBe(200);
      return (res.body.items as { firstname: string }[]).map((u) => u.firstname).sort();
    }

    it.each([
      ['implicit equality', { firstname: 'Ann' }, ['Ann']],
      ['$eq', { department: { $eq: 'it' } }, ['Bob', 'Cat']],
      ['$ne', { department: { $ne: 'it' } }, ['Ann', 'Dan']],
      ['$in', { firstname: { $in: ['Ann', 'Dan', 'Zed'] } }, ['Ann', 'Dan']],
      ['$nin', { department: { $nin: ['it', 'hr'] } }, ['Ann']],
      ['$gt', { age: { $gt: 35 } }, ['Cat']],
      ['$gte', { age: { $gte: 35 } }, ['Bob', 'Cat']],
      ['$lt', { age: { $lt: 35 } }, ['Ann']],
      ['$lte', { score: { $lte: 2.5 } }, ['Ann', 'Bob']],
      ['$exists true', { age: { $exists: true } }, ['Ann', 'Bob', 'Cat']],
      ['$exists false', { address: { $exists: false } }, ['Cat', 'Dan']],
      ['$and', { $and: [{ department: 'it' }, { age: { $gt: 40 } }] }, ['Cat']],
      ['$or', { $or: [{ firstname: 'Ann' }, { age: 45 }] }, ['Ann', 'Cat']],
      ['a dotted path into a custom field', { 'address.city': 'Oslo' }, ['Ann']],
      ['a dotted path with $in', { 'address.city': { $in: ['Oslo', 'Bergen'] } }, ['Ann', 'Bob']],
      ['is_active', { is_active: false }, ['Bob']],
      ['role', { role: 'admin' }, ['Ann']],
      ['permissions (contains)', { permissions: 'webhooks.read' }, ['Cat']],
      ['a custom field nobody has', { shoe_size: 44 }, []],
    ])('filters with %s', async (_case, where, expected) => {
      expect(await matching(where)).toEqual(expected);
    });

    it('filters on sys.created_at as time', async () => {
      const created = new Date(people.bob.sys.created_at);
      expect(await matching({ 'sys.created_at': { $gte: created.toISOString() } })).toEqual(expect.arrayContaining(['Bob', 'Cat', 'Dan']));
      expect(await matching({ 'sys.created_at': { $lt: '2000-01-01T00:00:00Z' } })).toEqual([]);
    });

    it('projects with select (custom fields and dotted paths included) and counts', async () => {
      const res = await t
        .http()
        .post(`${base}/_query`)
        .query({ with_count: true, sort: 'sys.created_at desc' })
        .set(as(admin))
        .send({ where: { user_type: slug }, select: { firstname: 1, 'address.city': 1 } });
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(4);
      expect(res.body.items).toEqual([
        { _id: people.dan._id, firstname: 'Dan' },
        { _id: people.cat._id, firstname: 'Cat' },
        { _id: people.bob._id, firstname: 'Bob', address: { city: 'Bergen' } },
        { _id: people.ann._id, firstname: 'Ann', address: { city: 'Oslo' } },
      ]);
      const excluded = await t
        .http()
        .post(`${base}/_query`)
        .set(as(admin))
        .send({ where: { _id: people.ann._id }, select: { sys: 0, address: 0, permissions: 0 } });
      expect(excluded.status).toBe(200);
      expect(Object.keys(excluded.body.items[0]).sort()).toEqual(
        ['_id', 'username', 'firstname', 'lastname', 'email_address', 'role', 'user_type', 'forbidden', 'is_active', 'source_provider', 'membership_id', 'age', 'department', 'score'].sort(),
      );
    });

    it('filters on the whole sys block as the API shows it', async () => {
      const res = await t
        .http()
        .post(`${base}/_query`)
        .set(as(admin))
        .send({ where: { user_type: slug, sys: people.cat.sys }, select: { sys: 1 } });
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([{ _id: people.cat._id, sys: people.cat.sys }]);
    });

    it('cannot widen the membership with $or', async () => {
      const other = await otherMembership();
      const res = await t
        .http()
        .post(`${base}/_query`)
        .set(as(admin))
        .send({ where: { $or: [{ membership_id: other.membershipId }, { _id: other.admin.userId }] } });
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([]);
    });

    function nested(levels: number): Record<string, unknown> {
      let filter: Record<string, unknown> = { firstname: 'x' };
      for (let i = 1; i < levels; i++) filter = { $and: [filter] };
      return filter;
    }

    it.each([
      ['a filter on password_hash', { where: { password_hash: { $exists: true } } }],
      ['a filter on password', { where: { password: 'x' } }],
      ['password_hash inside $or', { where: { $or: [{ firstname: 'x' }, { password_hash: { $ne: null } }] } }],
      ['a select of password_hash', { select: { password_hash: 1 } }],
      ['$where', { where: { $where: 'sleep(10)' } }],
      ['$regex', { where: { username: { $regex: '^a' } } }],
      ['$expr', { where: { $expr: { $eq: [1, 1] } } }],
      ['a path below password_hash', { where: { 'password_hash.x': 'x' } }],
      ['a path below a plain field', { where: { 'firstname.first': 'x' } }],
      ['a sort on a custom field', { where: { age: 1 }, sort: 'age' }],
      ['a malformed field name', { where: { 'first name': 'x' } }],
      ['SQL in a field name', { where: { "firstname'; drop table users; --": 'x' } }],
      ['nesting deeper than 8 levels', { where: nested(9) }],
      ['more than 1000 $in values', { where: { firstname: { $in: Array.from({ length: 1001 }, (_, i) => `n${i}`) } } }],
      ['a wrong value type', { where: { is_active: 'yes' } }],
      ['a bad timestamp', { where: { 'sys.created_at': { $gt: 'yesterday' } } }],
      ['a where that is not an object', { where: ['firstname'] }],
      ['select mixing 1 and 0', { select: { firstname: 1, lastname: 0 } }],
    ])('refuses %s: 400 InvalidQuery', async (_case, { sort, ...body }: Record<string, unknown>) => {
      const res = await t.http().post(`${base}/_query`).query(sort ? { sort } : {}).set(as(admin)).send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, errorCode: 'InvalidQuery', message: expect.any(String) });
    });

    it('refuses a __proto__ filter and a body with unknown keys', async () => {
      const proto = await t
        .http()
        .post(`${base}/_query`)
        .set(as(admin))
        .set('Content-Type', 'application/json')
        .send('{"where": {"__proto__": {"firstname": "x"}}}');
      expect(proto.status).toBe(400);
      expect(proto.body.errorCode).toBe('InvalidQuery');
      const extra = await t.http().post(`${base}/_query`).set(as(admin)).send({ filter: {} });
      expect(extra.status).toBe(400);
      expect(extra.body.errorCode).toBe('InvalidQuery');
    });
  });

  describe('search', () => {
    it('finds users by part of username, e-mail or name, case-insensitively, with literal wildcards', async () => {
      const marker = unique('srch').replace('-', '');
      const a = await createUser(t, admin, { username: `${marker}_one`, firstname: 'Zoë' });
      const b = await createUser(t, admin, { lastname: `${marker.toUpperCase()}son` });
      await createUser(t, admin, { username: `${marker}Xone` });

      const res = await t.http().get(`${base}/search`).query({ keyword: marker, with_count: true }).set(as(admin));
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(3);
      const underscore = await t.http().get(`${base}/search`).query({ keyword: `${marker}_` }).set(as(admin));
      expect(underscore.body.items.map((u: { _id: string }) => u._id)).toEqual([a._id]);
      const percent = await t.http().get(`${base}/search`).query({ keyword: '%' }).set(as(admin));
      expect(percent.body.items).toEqual([]);
      const byLastname = await t.http().get(`${base}/search`).query({ keyword: `${marker}SON` }).set(as(admin));
      expect(byLastname.body.items.map((u: { _id: string }) => u._id)).toEqual([b._id]);
    });

    it('needs a keyword of 1 to 128 characters', async () => {
      for (const query of [{}, { keyword: '' }, { keyword: 'k'.repeat(129) }, { keyword: ['a', 'b'] }]) {
        const res = await t.http().get(`${base}/search`).query(query).set(as(admin));
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ field: 'keyword', message: expect.any(String) }]);
      }
    });
  });

  describe('update', () => {
    it('replaces the mutable fields, records UserUpdated with prior', async () => {
      const user = await createUser(t, admin, { firstname: 'Old', lastname: 'Name', permissions: ['webhooks.read'] });
      const res = await t
        .http()
        .put(`${base}/${user._id}`)
        .set(as(admin))
        .send(putBodyOf(user, { firstname: 'New', lastname: null, role: 'admin', email_address: user.email_address.toUpperCase() }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ _id: user._id, firstname: 'New', lastname: null, role: 'admin', email_address: user.email_address, permissions: ['webhooks.read'] });
      expect(res.body.sys).toEqual({ created_at: user.sys.created_at, created_by: admin.userId, modified_at: expect.any(String), modified_by: admin.userId });

      const [event] = await eventsAbout(t, admin.membershipId, 'UserUpdated', user._id);
      expect(event.document).toEqual(res.body);
      expect(event.prior).toMatchObject({ _id: user._id, firstname: 'Old', lastname: 'Name', role: null });
      expectNoSecrets(event);
    });

    it('clears optional fields left out, keeps is_active when left out', async () => {
      const user = await createUser(t, admin, { firstname: 'F', role: 'admin', permissions: ['webhooks.read'], is_active: false });
      const res = await t.http().put(`${base}/${user._id}`).set(as(admin)).send({ username: user.username, email_address: user.email_address });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ firstname: null, role: null, permissions: [], is_active: false });
    });

    it('answers 409 IdenticalDocumentError when nothing changes', async () => {
      const user = await createUser(t, admin, { firstname: 'Same' });
      const res = await t.http().put(`${base}/${user._id}`).set(as(admin)).send(putBodyOf(user));
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ statusCode: 409, errorCode: 'IdenticalDocumentError', message: expect.any(String) });
    });

    it('refuses a password, server-managed fields, unknown fields and taken usernames', async () => {
      const user = await createUser(t, admin);
      const other = await createUser(t, admin);
      const password = await t.http().put(`${base}/${user._id}`).set(as(admin)).send(putBodyOf(user, { password: 'a new password!' }));
      expect(password.status).toBe(400);
      expect(password.body.errors).toEqual([{ field: 'password', message: expect.stringMatching(/change-password/) }]);

      const managed = await t.http().put(`${base}/${user._id}`).set(as(admin)).send({ ...putBodyOf(user), _id: 'x', sys: {} });
      expect(managed.status).toBe(400);
      expect(managed.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['_id', 'sys']);

      const unknown = await t.http().put(`${base}/${user._id}`).set(as(admin)).send(putBodyOf(user, { nickname: 'x' }));
      expect(unknown.status).toBe(400);
      expect(unknown.body.errors).toEqual([{ field: 'nickname', message: expect.any(String) }]);

      const taken = await t.http().put(`${base}/${user._id}`).set(as(admin)).send(putBodyOf(user, { username: other.username }));
      expect(taken.status).toBe(409);
      expect(taken.body.errorCode).toBe('UserAlreadyExists');

      const badPermission = await t.http().put(`${base}/${user._id}`).set(as(admin)).send(putBodyOf(user, { forbidden: ['**'] }));
      expect(badPermission.status).toBe(400);
      expect(badPermission.body.errorCode).toBe('InvalidPermission');

      const badRole = await t.http().put(`${base}/${user._id}`).set(as(admin)).send(putBodyOf(user, { role: 'ghost' }));
      expect(badRole.status).toBe(400);
      expect(badRole.body.errors).toEqual([{ field: 'role', message: expect.any(String) }]);

      const missing = await t.http().put(`${base}/no-such-user`).set(as(admin)).send(putBodyOf(user));
      expect(missing.status).toBe(404);
      expect(missing.body.errorCode).toBe('UserNotFound');
    });
  });

  describe('own record', () => {
    it('lets a user read itself but no one else', async () => {
      const { user, session } = await createSignedInUser(t, admin);
      const self = await t.http().get(`${base}/${user._id}`).set(as(session));
      expect(self.status).toBe(200);
      expect(self.body._id).toBe(user._id);
      const other = await t.http().get(`${base}/${admin.userId}`).set(as(session));
      expect(other.status).toBe(403);
      expect(other.body.errorCode).toBe('AccessDenied');
    });

    it('lets a user change its own names and custom fields', async () => {
      const type = await createUserType(t, admin, { properties: { nickname: { type: 'string' } } });
      const { user, session } = await createSignedInUser(t, admin, { user_type: type.slug, firstname: 'Me', role: 'admin' });
      const res = await t
        .http()
        .put(`${base}/${user._id}`)
        .set(as(session))
        .send(putBodyOf(user, { firstname: 'Myself', lastname: 'Too', nickname: 'me' }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ firstname: 'Myself', lastname: 'Too', nickname: 'me', role: 'admin' });
      const [event] = await eventsAbout(t, admin.membershipId, 'UserUpdated', user._id);
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
      const type = await createUserType(t, admin, { properties: {} });
      const { user, session } = await createSignedInUser(t, admin, { forbidden: ['webhooks.delete'] });
      const res = await t
        .http()
        .put(`${base}/${user._id}`)
        .set(as(session))
        .send(putBodyOf(user, { firstname: 'Also', ...overrides }));
      expect(res.status).toBe(403);
      expect(res.body.errorCode).toBe('AccessDenied');
      expect(res.body.message).toContain(field);
      const typeChange = await t
        .http()
        .put(`${base}/${user._id}`)
        .set(as(session))
        .send(putBodyOf(user, { user_type: type.slug }));
      expect(typeChange.status).toBe(403);
      const unchanged = await t.http().get(`${base}/${user._id}`).set(as(admin));
      expect(unchanged.body).toMatchObject({ firstname: null, role: null, forbidden: ['webhooks.delete'], is_active: true });
    });

    it('lets a user with users.update on itself change privileged fields', async () => {
      const { user } = await createUser(t, admin, { permissions: [] }).then((u) => ({ user: u }));
      const promoted = await t.http().put(`${base}/${user._id}`).set(as(admin)).send(putBodyOf(user, { permissions: [`users.update.${user._id}`] }));
      expect(promoted.status).toBe(200);
      const session = await signIn(t, admin.membershipId, user.username, user.password);
      const res = await t
        .http()
        .put(`${base}/${user._id}`)
        .set(as(session))
        .send(putBodyOf(promoted.body, { forbidden: ['events.read'] }));
      expect(res.status).toBe(200);
      expect(res.body.forbidden).toEqual(['events.read']);
    });

    it('does not let a user activate, freeze, delete or update anyone else', async () => {
      const { user, session } = await createSignedInUser(t, admin);
      const victim = await createUser(t, admin);
      for (const action of ['activate', 'freeze']) {
        const self = await t.http().post(`${base}/${user._id}/${action}`).set(as(session));
        expect(self.status).toBe(403);
        const other = await t.http().post(`${base}/${victim._id}/${action}`).set(as(session));
        expect(other.status).toBe(403);
      }
      const update = await t.http().put(`${base}/${victim._id}`).set(as(session)).send(putBodyOf(victim, { firstname: 'x' }));
      expect(update.status).toBe(403);
      const remove = await t.http().delete(`${base}/${user._id}`).set(as(session));
      expect(remove.status).toBe(403);
      const password = await t.http().put(`${base}/${victim._id}/change-password`).set(as(session)).send({ password: 'hijacked password' });
      expect(password.status).toBe(403);
    });
  });

  describe('change-password', () => {
    it('lets users change their own password: this session survives, the others are revoked', async () => {
      const { user, session: current } = await createSignedInUser(t, admin);
      const otherDevice = await signIn(t, admin.membershipId, user.username, user.password);
      const res = await t.http().put(`${base}/${user._id}/change-password`).set(as(current)).send({ current_password: user.password, password: 'my brand new password' });
      expect(res.status).toBe(204);

      expect((await t.http().get(`${base}/${user._id}`).set(as(current))).status).toBe(200);
      const revoked = await t.http().get(`${base}/${user._id}`).set(as(otherDevice));
      expect(revoked.status).toBe(401);
      expect(revoked.body.errorCode).toBe('TokenWasRevoked');
      const refresh = await t.http().post('/refresh-token').send({ token: otherDevice.refreshToken });
      expect(refresh.status).toBe(401);

      const oldPassword = await t.http().post('/generate-token').set('X-Service-Alias', admin.membershipId).send({ username: user.username, password: user.password });
      expect(oldPassword.status).toBe(401);
      expect(oldPassword.body.errorCode).toBe('InvalidCredentials');
      await signIn(t, admin.membershipId, user.username, 'my brand new password');

      const [changed] = await eventsAbout(t, admin.membershipId, 'UserPasswordChanged', user._id);
      expect(changed.utilizerId).toBe(user._id);
      expectNoSecrets(changed);
      const revokedEvents = await eventsAbout(t, admin.membershipId, 'TokenRevoked', user._id);
      expect(revokedEvents).toHaveLength(1);
    });

    it('revokes every session of the user when an admin changes the password', async () => {
      const { user, session: first } = await createSignedInUser(t, admin);
      const second = await signIn(t, admin.membershipId, user.username, user.password);
      const res = await t.http().put(`${base}/${user._id}/change-password`).set(as(admin)).send({ password: 'set by the admin' });
      expect(res.status).toBe(204);
      for (const session of [first, second]) {
        const r = await t.http().get(`${base}/${user._id}`).set(as(session));
        expect(r.status).toBe(401);
        expect(r.body.errorCode).toBe('TokenWasRevoked');
      }
      expect((await t.http().get(base).set(as(admin))).status).toBe(200);
      await signIn(t, admin.membershipId, user.username, 'set by the admin');
    });

    it('validates the new password before hashing; unknown user is 404', async () => {
      const user = await createUser(t, admin);
      for (const body of [{}, { password: 'short' }, { password: 'p'.repeat(10 * 1024) }, { password: 12345678 }, { password: DEFAULT_PASSWORD, extra: 1 }]) {
        const res = await t.http().put(`${base}/${user._id}/change-password`).set(as(admin)).send(body);
        expect(res.status).toBe(400);
        expect(res.body.errorCode).toBe('ModelValidationError');
      }
      const missing = await t.http().put(`${base}/no-such-user/change-password`).set(as(admin)).send({ password: DEFAULT_PASSWORD });
      expect(missing.status).toBe(404);
      expect(missing.body.errorCode).toBe('UserNotFound');
    });
  });

  describe('freeze and activate', () => {
    it('freezes a user: its tokens answer 401 at once and sign-in answers UserInactive', async () => {
      const { user, session } = await createSignedInUser(t, admin);
      const res = await t.http().post(`${base}/${user._id}/freeze`).set(as(admin));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ _id: user._id, is_active: false });

      const access = await t.http().get(`${base}/${user._id}`).set(as(session));
      expect(access.status).toBe(401);
      const me = await t.http().get('/me').set(as(session));
      expect(me.status).toBe(401);
      const refresh = await t.http().post('/refresh-token').send({ token: session.refreshToken });
      expect(refresh.status).toBe(401);

      const signInRight = await t.http().post('/generate-token').set('X-Service-Alias', admin.membershipId).send({ username: user.username, password: user.password });
      expect(signInRight.status).toBe(401);
      expect(signInRight.body.errorCode).toBe('UserInactive');
      const signInWrong = await t.http().post('/generate-token').set('X-Service-Alias', admin.membershipId).send({ username: user.username, password: 'wrong password!' });
      expect(signInWrong.status).toBe(401);
      expect(signInWrong.body.errorCode).toBe('InvalidCredentials');

      const [updated] = await eventsAbout(t, admin.membershipId, 'UserUpdated', user._id);
      expect(updated.prior).toMatchObject({ is_active: true });
      expect(updated.document).toMatchObject({ is_active: false });
      expect(await eventsAbout(t, admin.membershipId, 'TokenRevoked', user._id)).toHaveLength(1);
    });

    it('activates a frozen user; both actions are idempotent', async () => {
      const user = await createUser(t, admin);
      await t.http().post(`${base}/${user._id}/freeze`).set(as(admin)).expect(200);
      const again = await t.http().post(`${base}/${user._id}/freeze`).set(as(admin));
      expect(again.status).toBe(200);
      expect(again.body.is_active).toBe(false);

      const res = await t.http().post(`${base}/${user._id}/activate`).set(as(admin));
      expect(res.status).toBe(200);
      expect(res.body.is_active).toBe(true);
      await signIn(t, admin.membershipId, user.username, user.password);
      const activeAgain = await t.http().post(`${base}/${user._id}/activate`).set(as(admin));
      expect(activeAgain.status).toBe(200);

      const events = await eventsAbout(t, admin.membershipId, 'UserUpdated', user._id);
      expect(events.map((e) => (e.document as { is_active: boolean }).is_active)).toEqual([false, true]);
    });

    it('answers 404 for an unknown user', async () => {
      for (const action of ['freeze', 'activate']) {
        const res = await t.http().post(`${base}/no-such-user/${action}`).set(as(admin));
        expect(res.status).toBe(404);
        expect(res.body.errorCode).toBe('UserNotFound');
      }
    });
  });

  describe('delete', () => {
    it('deletes a user: 204, then 404; its tokens stop working; UserDeleted and TokenRevoked events', async () => {
      const { user, session } = await createSignedInUser(t, admin);
      const res = await t.http().delete(`${base}/${user._id}`).set(as(admin));
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect((await t.http().get(`${base}/${user._id}`).set(as(admin))).status).toBe(404);
      const again = await t.http().delete(`${base}/${user._id}`).set(as(admin));
      expect(again.status).toBe(404);
      expect(again.body.errorCode).toBe('UserNotFound');
      expect((await t.http().get('/me').set(as(session))).status).toBe(401);

      const [deleted] = await eventsAbout(t, admin.membershipId, 'UserDeleted', user._id);
      expect(deleted.document).toEqual({});
      expect(deleted.prior).toMatchObject({ _id: user._id, username: user.username });
      expectNoSecrets(deleted);
      expect(await eventsAbout(t, admin.membershipId, 'TokenRevoked', user._id)).toHaveLength(1);
    });

    it('bulk-deletes own ids; foreign and unknown ids are not found', async () => {
      const a = await createUser(t, admin);
      const b = await createUser(t, admin);
      const other = await otherMembership();
      const res = await t
        .http()
        .delete(base)
        .set(as(admin))
        .send({ ids: [a._id, other.admin.userId, b._id, 'no-such-user', a._id] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ deleted: [a._id, b._id], not_found: [other.admin.userId, 'no-such-user'] });
      expect((await t.http().get(`${usersPath(other.membershipId)}/${other.admin.userId}`).set(as(other.admin))).status).toBe(200);
      expect(await eventsAbout(t, admin.membershipId, 'UserDeleted', a._id)).toHaveLength(1);
      expect(await eventsAbout(t, admin.membershipId, 'UserDeleted', b._id)).toHaveLength(1);
    });

    it.each([[{}], [{ ids: [] }], [{ ids: 'x' }], [{ ids: [1] }], [{ ids: Array.from({ length: 1001 }, (_, i) => `id${i}`) }]])(
      'refuses the bulk body %#: 400',
      async (body) => {
        const res = await t.http().delete(base).set(as(admin)).send(body);
        expect(res.status).toBe(400);
        expect(res.body.errorCode).toBe('ModelValidationError');
      },
    );
  });

  describe('custom fields', () => {
    let employee: UserTypeDoc;

    beforeAll(async () => {
      employee = await createUserType(t, admin, {
        properties: {
          department: { type: 'enum', values: ['sales', 'it'], required: true },
          employee_no: { type: 'integer', unique: true },
          remote: { type: 'boolean', default: false },
          born: { type: 'date' },
          contact: { type: 'email' },
          homepage: { type: 'uri' },
          address: { type: 'object' },
          tags: { type: 'array' },
          salary: { type: 'number' },
          nickname: { type: 'string' },
        },
      });
    });

    it('returns custom fields at the top level, defaults applied, and filters on them', async () => {
      const user = await createUser(t, admin, {
        user_type: employee.slug,
        department: 'it',
        employee_no: 1001,
        born: '1990-02-28',
        contact: 'Desk@Example.com',
        homepage: 'https://example.com/me',
        address: { city: 'Oslo' },
        tags: ['a', 'b'],
        salary: 12.5,
      });
      expect(user).toMatchObject({
        user_type: employee.slug,
        department: 'it',
        employee_no: 1001,
        remote: false,
        born: '1990-02-28',
        contact: 'desk@example.com',
        homepage: 'https://example.com/me',
        address: { city: 'Oslo' },
        tags: ['a', 'b'],
        salary: 12.5,
      });
      expect(user).not.toHaveProperty('custom_fields');
      const [event] = await eventsAbout(t, admin.membershipId, 'UserCreated', user._id);
      expect(event.document).toMatchObject({ department: 'it', employee_no: 1001 });
    });

    it.each([
      ['a missing required field', { department: undefined }, 'department', /required/],
      ['a wrong enum value', { department: 'hr' }, 'department', /one of/],
      ['a non-integer', { employee_no: 1.5 }, 'employee_no', /integer/],
      ['a string for a number', { salary: '12' }, 'salary', /number/],
      ['a string for a boolean', { remote: 'no' }, 'remote', /true or false/],
      ['an invalid date', { born: '1990-02-30' }, 'born', /ISO 8601/],
      ['an invalid e-mail', { contact: 'desk' }, 'contact', /e-mail/],
      ['an ftp uri', { homepage: 'ftp://example.com' }, 'homepage', /http or https/],
      ['a javascript uri', { homepage: 'javascript:alert(1)' }, 'homepage', /http or https/],
      ['an array for an object', { address: ['Oslo'] }, 'address', /object/],
      ['a string for an array', { tags: 'a,b' }, 'tags', /array/],
      ['a field the type does not define', { shoe_size: 44 }, 'shoe_size', /not a property/],
      ['a huge string', { nickname: 'n'.repeat(100_000) }, 'nickname', /at most/],
      ['a deeply nested object', { address: JSON.parse(`${'{"a":'.repeat(10)}1${'}'.repeat(10)}`) as object }, 'address', /nested/],
      ['a huge array', { tags: Array.from({ length: 5000 }, (_, i) => i) }, 'tags', /too large/],
    ])('refuses %s: 400 naming the field', async (_case, overrides, field, message) => {
      const res = await t
        .http()
        .post(base)
        .set(as(admin))
        .send(userBody({ user_type: employee.slug, department: 'it', ...overrides }));
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
      expect(res.body.errors).toEqual([{ field, message: expect.stringMatching(message) }]);
    });

    it('refuses a __proto__ key inside an object value', async () => {
      const body = JSON.stringify(userBody({ user_type: employee.slug, department: 'it' })).replace(/}$/, ',"address":{"__proto__":{"x":1}}}');
      const res = await t.http().post(base).set(as(admin)).set('Content-Type', 'application/json').send(body);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([{ field: 'address', message: expect.stringMatching(/__proto__/) }]);
    });

    it('enforces unique fields among users of the type, also under concurrency', async () => {
      await createUser(t, admin, { user_type: employee.slug, department: 'it', employee_no: 2001 });
      const duplicate = await t
        .http()
        .post(base)
        .set(as(admin))
        .send(userBody({ user_type: employee.slug, department: 'sales', employee_no: 2001 }));
      expect(duplicate.status).toBe(409);
      expect(duplicate.body).toEqual({
        statusCode: 409,
        errorCode: 'UserAlreadyExists',
        message: expect.any(String),
        errors: [{ field: 'employee_no', message: expect.stringMatching(/unique/) }],
      });

      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          t
            .http()
            .post(base)
            .set(as(admin))
            .send(userBody({ user_type: employee.slug, department: 'it', employee_no: 3001 })),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);

      // PUTs need no hashing, so they reach the database together: exactly one may take the value.
      const racers: UserDoc[] = [];
      for (let i = 0; i < 8; i++) racers.push(await createUser(t, admin, { user_type: employee.slug, department: 'it', employee_no: 4000 + i }));
      const puts = await Promise.all(racers.map((u) => t.http().put(`${base}/${u._id}`).set(as(admin)).send(putBodyOf(u, { employee_no: 4100 }))));
      expect(puts.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);

      // Updating a user keeps its own value without colliding with itself.
      const holder = results.find((r) => r.status === 201)?.body as UserDoc;
      const update = await t.http().put(`${base}/${holder._id}`).set(as(admin)).send(putBodyOf(holder, { nickname: 'keeps 3001' }));
      expect(update.status).toBe(200);
      const steal = await createUser(t, admin, { user_type: employee.slug, department: 'it', employee_no: 3002 });
      const stolen = await t.http().put(`${base}/${steal._id}`).set(as(admin)).send(putBodyOf(steal, { employee_no: 3001 }));
      expect(stolen.status).toBe(409);
    });

    it('checks custom fields on update and drops those the new type does not define', async () => {
      const user = await createUser(t, admin, { user_type: employee.slug, department: 'it', nickname: 'nick' });
      const bad = await t.http().put(`${base}/${user._id}`).set(as(admin)).send(putBodyOf(user, { department: 'hr' }));
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual([{ field: 'department', message: expect.any(String) }]);

      const cleared = await t.http().put(`${base}/${user._id}`).set(as(admin)).send(putBodyOf(user, { nickname: null }));
      expect(cleared.status).toBe(200);
      expect(cleared.body).not.toHaveProperty('nickname');

      const untyped = await t
        .http()
        .put(`${base}/${user._id}`)
        .set(as(admin))
        .send({ username: user.username, email_address: user.email_address, user_type: null });
      expect(untyped.status).toBe(200);
      expect(untyped.body).not.toHaveProperty('department');
      expect(untyped.body.user_type).toBeNull();
    });
  });
});
