import { as, authHeader, createMembership, createSignedInUser, createUser, createUserType, expectNoSecrets, putBodyOf, unique, useInstallation, type UserDoc, usersPath } from '../support/api';

/** The users API: read, list, _query and search. (Split by behaviour; the other parts are users-create.e2e-spec.ts, users-update.e2e-spec.ts, users-custom-fields.e2e-spec.ts.) */
describe('users API', () => {
  const suite = useInstallation();
  const base = (): string => usersPath(suite.admin.membershipId);
  const { get, post } = as(() => suite.t, () => suite.admin);

  describe('read', () => {
    it('gets a user by id; unknown id is 404 UserNotFound', async () => {
      const user = await createUser(suite.t, suite.admin, { firstname: 'Read' });
      const res = await get(`${base()}/${user._id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(putBodyOf(user, { _id: user._id, membership_id: suite.admin.membershipId, sys: user.sys, source_provider: null }));
      expectNoSecrets(res.body);

      const missing = await get(`${base()}/no-such-user`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ statusCode: 404, errorCode: 'UserNotFound', message: expect.any(String) });
    });

    it('does not show users of another membership', async () => {
      const other = await createMembership(suite.t, suite.admin);
      const foreign = await get(`${base()}/${other.admin.userId}`);
      expect(foreign.status).toBe(404);
      const crossing = await get(`${usersPath(other.membershipId)}/${other.admin.userId}`);
      expect(crossing.status).toBe(403);
      expect(crossing.body.errorCode).toBe('AccessDenied');
    });

    it('lists with paging, with_count and sort', async () => {
      const type = await createUserType(suite.t, suite.admin, { properties: { batch: { type: 'string' } } });
      const created: UserDoc[] = [];
      for (let i = 0; i < 5; i++) created.push(await createUser(suite.t, suite.admin, { user_type: type.slug, email_address: `${unique(`p${i}`)}@example.com` }));

      const all = await suite.t.http().get(base()).query({ limit: 1000, with_count: 'true' }).set(authHeader(suite.admin));
      expect(all.status).toBe(200);
      expect(all.body.count).toBe(all.body.items.length);
      for (const item of all.body.items) expectNoSecrets(item);
      const ids = all.body.items.map((u: { _id: string }) => u._id);
      expect(ids).toEqual(expect.arrayContaining(created.map((u) => u._id)));

      const page = await suite.t.http().get(base()).query({ skip: 1, limit: 2 }).set(authHeader(suite.admin));
      expect(page.status).toBe(200);
      expect(page.body.items.map((u: { _id: string }) => u._id)).toEqual(ids.slice(1, 3));
      expect(page.body).not.toHaveProperty('count');

      const sorted = await suite.t.http().get(base()).query({ sort: 'email_address desc', limit: 1000 }).set(authHeader(suite.admin));
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
      const res = await suite.t.http().get(base()).query(query).set(authHeader(suite.admin));
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('InvalidQuery');
      expect(res.body.message).toContain(part);
    });

    it('needs users.read for lists', async () => {
      const { session } = await createSignedInUser(suite.t, suite.admin);
      const res = await suite.t.http().get(base()).set(authHeader(session));
      expect(res.status).toBe(403);
    });
  });

  describe('_query', () => {
    let slug: string;
    let people: Record<string, UserDoc>;

    beforeAll(async () => {
      const type = await createUserType(suite.t, suite.admin, {
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
      for (const [name, spec] of Object.entries(specs)) people[name] = await createUser(suite.t, suite.admin, { user_type: slug, ...spec });
    });

    /** The first names of the users of this block that match `where`, sorted. */
    async function matching(where: Record<string, unknown>): Promise<string[]> {
      const res = await post(`${base()}/_query`, { where: { $and: [{ user_type: slug }, where] } });
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
      const res = await suite.t
        .http()
        .post(`${base()}/_query`)
        .query({ with_count: true, sort: 'sys.created_at desc' })
        .set(authHeader(suite.admin))
        .send({ where: { user_type: slug }, select: { firstname: 1, 'address.city': 1 } });
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(4);
      expect(res.body.items).toEqual([
        { _id: people.dan._id, firstname: 'Dan' },
        { _id: people.cat._id, firstname: 'Cat' },
        { _id: people.bob._id, firstname: 'Bob', address: { city: 'Bergen' } },
        { _id: people.ann._id, firstname: 'Ann', address: { city: 'Oslo' } },
      ]);
      const excluded = await post(`${base()}/_query`, { where: { _id: people.ann._id }, select: { sys: 0, address: 0, permissions: 0 } });
      expect(excluded.status).toBe(200);
      expect(Object.keys(excluded.body.items[0]).sort()).toEqual(
        ['_id', 'username', 'firstname', 'lastname', 'email_address', 'role', 'user_type', 'forbidden', 'is_active', 'source_provider', 'membership_id', 'age', 'department', 'score'].sort(),
      );
    });

    it('filters on the whole sys block as the API shows it', async () => {
      const res = await post(`${base()}/_query`, { where: { user_type: slug, sys: people.cat.sys }, select: { sys: 1 } });
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([{ _id: people.cat._id, sys: people.cat.sys }]);
    });

    it('cannot widen the membership with $or', async () => {
      const other = await createMembership(suite.t, suite.admin);
      const res = await post(`${base()}/_query`, { where: { $or: [{ membership_id: other.membershipId }, { _id: other.admin.userId }] } });
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
      ['a wrong value type', { where: { is_active: 'yes' } }],
      ['a bad timestamp', { where: { 'sys.created_at': { $gt: 'yesterday' } } }],
      ['a where that is not an object', { where: ['firstname'] }],
      ['select mixing 1 and 0', { select: { firstname: 1, lastname: 0 } }],
    ])('refuses %s: 400 InvalidQuery', async (_case, { sort, ...body }: Record<string, unknown>) => {
      const res = await suite.t.http().post(`${base()}/_query`).query(sort ? { sort } : {}).set(authHeader(suite.admin)).send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ statusCode: 400, errorCode: 'InvalidQuery', message: expect.any(String) });
    });

    it('refuses more than 1000 $in values with 400 InvalidQuery, as the query language says', async () => {
      const res = await suite.t.http().post(`${base()}/_query`).set(authHeader(suite.admin)).send({ where: { firstname: { $in: Array.from({ length: 1001 }, (_, i) => `n${i}`) } } });
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('InvalidQuery');
    });

    it('refuses a __proto__ filter and a body with unknown keys', async () => {
      const proto = await post(`${base()}/_query`)
        .set('Content-Type', 'application/json')
        .send('{"where": {"__proto__": {"firstname": "x"}}}');
      expect(proto.status).toBe(400);
      expect(proto.body.errorCode).toBe('InvalidQuery');
      const extra = await post(`${base()}/_query`, { filter: {} });
      expect(extra.status).toBe(400);
      expect(extra.body.errorCode).toBe('InvalidQuery');
    });
  });

  describe('search', () => {
    it('finds users by part of username, e-mail or name, case-insensitively, with literal wildcards', async () => {
      const marker = unique('srch').replace('-', '');
      const a = await createUser(suite.t, suite.admin, { username: `${marker}_one`, firstname: 'Zoë' });
      const b = await createUser(suite.t, suite.admin, { lastname: `${marker.toUpperCase()}son` });
      await createUser(suite.t, suite.admin, { username: `${marker}Xone` });

      const res = await suite.t.http().get(`${base()}/search`).query({ keyword: marker, with_count: true }).set(authHeader(suite.admin));
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(3);
      const underscore = await suite.t.http().get(`${base()}/search`).query({ keyword: `${marker}_` }).set(authHeader(suite.admin));
      expect(underscore.body.items.map((u: { _id: string }) => u._id)).toEqual([a._id]);
      const percent = await suite.t.http().get(`${base()}/search`).query({ keyword: '%' }).set(authHeader(suite.admin));
      expect(percent.body.items).toEqual([]);
      const byLastname = await suite.t.http().get(`${base()}/search`).query({ keyword: `${marker}SON` }).set(authHeader(suite.admin));
      expect(byLastname.body.items.map((u: { _id: string }) => u._id)).toEqual([b._id]);
    });

    it('needs a keyword of 1 to 128 characters', async () => {
      for (const query of [{}, { keyword: '' }, { keyword: 'k'.repeat(129) }, { keyword: ['a', 'b'] }]) {
        const res = await suite.t.http().get(`${base()}/search`).query(query).set(authHeader(suite.admin));
        expect(res.status).toBe(400);
        expect(res.body.errors).toEqual([{ field: 'keyword', message: expect.any(String) }]);
      }
    });
  });
});
