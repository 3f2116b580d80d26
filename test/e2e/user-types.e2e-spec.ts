import { as, authHeader, createSignedInUser, createUser, createUserType, eventsAbout, expectFieldRefused, putBodyOf, slugOfName, unique, useInstallation, userBody, usersPath, userTypesPath } from '../support/api';

describe('user types API', () => {
  const suite = useInstallation();
  const base = (): string => userTypesPath(suite.admin.membershipId);
  const { get, post, put, del } = as(() => suite.t, () => suite.admin);


  /** A user-type body whose fields replace or add to a valid one. */
  const typeBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    name: unique('Type'),
    properties: { department: { type: 'string' } },
    ...overrides,
  });

  describe('create', () => {
    it('creates a user type: slug from the name, normalized properties, UserTypeCreated', async () => {
      const name = unique('Field Worker');
      const res = await post(base(), {
        name,
        description: 'people in the field',
        properties: {
          department: { type: 'enum', values: ['north', 'south'], required: true },
          badge: { type: 'integer', unique: true, description: 'badge number' },
          remote: { type: 'boolean', default: true },
        },
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        _id: expect.any(String),
        name,
        slug: slugOfName(name),
        description: 'people in the field',
        properties: {
          department: { type: 'enum', values: ['north', 'south'], required: true, unique: false },
          badge: { type: 'integer', required: false, unique: true, description: 'badge number' },
          remote: { type: 'boolean', required: false, unique: false, default: true },
        },
        allow_additional_properties: false,
        membership_id: suite.admin.membershipId,
        sys: { created_at: expect.any(String), created_by: suite.admin.userId },
      });
      const [event] = await eventsAbout(suite.t, suite.admin.membershipId, 'UserTypeCreated', res.body._id);
      expect(event.document).toEqual(res.body);
    });

    it('takes an explicit slug and refuses a taken one: 409 UserTypeAlreadyExists', async () => {
      const slug = unique('staff');
      const first = await post(base(), typeBody({ slug }));
      expect(first.status).toBe(201);
      expect(first.body.slug).toBe(slug);
      const second = await post(base(), typeBody({ slug }));
      expect(second.status).toBe(409);
      expect(second.body).toEqual({ statusCode: 409, errorCode: 'UserTypeAlreadyExists', message: expect.any(String) });
    });

    it('defaults properties to none', async () => {
      const res = await post(base(), { name: unique('Bare') });
      expect(res.status).toBe(201);
      expect(res.body.properties).toEqual({});
    });

    it.each([
      ['no name', { name: undefined }, 'name'],
      ['a malformed slug', { slug: 'Not A Slug' }, 'slug'],
      ['allow_additional_properties not boolean', { allow_additional_properties: 'yes' }, 'allow_additional_properties'],
      ['an unknown field', { colour: 'blue' }, 'colour'],
      ['properties not an object', { properties: [] }, 'properties'],
      ['an unknown type', { properties: { a: { type: 'text' } } }, 'properties.a.type'],
      ['a type missing', { properties: { a: {} } }, 'properties.a.type'],
      ['an enum without values', { properties: { a: { type: 'enum' } } }, 'properties.a.values'],
      ['an enum with empty values', { properties: { a: { type: 'enum', values: [] } } }, 'properties.a.values'],
      ['values on a string', { properties: { a: { type: 'string', values: ['x'] } } }, 'properties.a.values'],
      ['a default of the wrong type', { properties: { a: { type: 'integer', default: 'one' } } }, 'properties.a.default'],
      ['a default outside the enum', { properties: { a: { type: 'enum', values: ['x'], default: 'y' } } }, 'properties.a.default'],
      ['a default that is not a URL', { properties: { a: { type: 'uri', default: 'ftp://x' } } }, 'properties.a.default'],
      ['a default on a unique property', { properties: { a: { type: 'string', unique: true, default: 'x' } } }, 'properties.a.default'],
      ['unique on a boolean', { properties: { a: { type: 'boolean', unique: true } } }, 'properties.a.unique'],
      ['required not boolean', { properties: { a: { type: 'string', required: 1 } } }, 'properties.a.required'],
      ['an unknown setting', { properties: { a: { type: 'string', pattern: '.*' } } }, 'properties.a.pattern'],
      ['a property named like a built-in field', { properties: { email_address: { type: 'email' } } }, 'properties.email_address'],
      ['a property named _id', { properties: { _id: { type: 'string' } } }, 'properties._id'],
      ['a property named password', { properties: { password: { type: 'string' } } }, 'properties.password'],
      ['a secret-looking property name', { properties: { api_token: { type: 'string' } } }, 'properties.api_token'],
      ['a property name with a dot', { properties: { 'a.b': { type: 'string' } } }, 'properties.a.b'],
      ['a property named constructor', { properties: { constructor: { type: 'string' } } }, 'properties.constructor'],
    ])('refuses %s: 400 ModelValidationError naming the field', async (_case, overrides, field) => {
      const res = await post(base(), typeBody(overrides));
      expectFieldRefused(res, field);
    });

    it('reports problems of the fixed fields and of the properties together', async () => {
      const res = await post(base(), { name: '', properties: { a: { type: 'nope' }, b: { type: 'enum' } } });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['name', 'properties.a.type', 'properties.b.values']);
    });

    it('refuses __proto__ keys, too many properties and huge input without a 500', async () => {
      const proto = await post(base())
        .set('Content-Type', 'application/json')
        .send(`{"name":"${unique('P')}","properties":{"__proto__":{"type":"string"}},"__proto__":{"x":1}}`);
      expect(proto.status).toBe(400);
      expect(proto.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['__proto__', 'properties.__proto__']);

      const many = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`p${i}`, { type: 'string' }]));
      const tooMany = await post(base(), typeBody({ properties: many }));
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.errors).toEqual([{ field: 'properties', message: expect.stringMatching(/at most 100/) }]);

      const hugeEnum = await post(base(), typeBody({ properties: { a: { type: 'enum', values: Array.from({ length: 5000 }, (_, i) => `v${i}`) } } }));
      expect(hugeEnum.status).toBe(400);

      const deepDefault = await post(base(), typeBody({ properties: { a: { type: 'object', default: JSON.parse(`${'{"a":'.repeat(10)}1${'}'.repeat(10)}`) as object } } }));
      expect(deepDefault.status).toBe(400);
      expect(deepDefault.body.errors).toEqual([{ field: 'properties.a.default', message: expect.stringMatching(/nested/) }]);
    });

    it('needs user-types.create', async () => {
      const { session } = await createSignedInUser(suite.t, suite.admin);
      const res = await suite.t.http().post(base()).set(authHeader(session)).send(typeBody());
      expect(res.status).toBe(403);
      expect(res.body.errorCode).toBe('AccessDenied');
      const read = await suite.t.http().get(base()).set(authHeader(session));
      expect(read.status).toBe(403);
    });
  });

  describe('read', () => {
    it('gets by id; unknown id is 404 UserTypeNotFound', async () => {
      const type = await createUserType(suite.t, suite.admin, { properties: { a: { type: 'date' } } });
      const res = await get(`${base()}/${type._id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(type);
      const missing = await get(`${base()}/nope`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ statusCode: 404, errorCode: 'UserTypeNotFound', message: expect.any(String) });
    });

    it('lists with paging and count, and queries with where and select', async () => {
      const marker = unique('listed');
      const types = [];
      for (let i = 0; i < 3; i++) {
        types.push(await createUserType(suite.t, suite.admin, { description: marker, allow_additional_properties: i === 1, properties: { [`p${i}`]: { type: 'string' } } }));
      }
      const all = await suite.t.http().get(base()).query({ with_count: true, limit: 1000 }).set(authHeader(suite.admin));
      expect(all.status).toBe(200);
      expect(all.body.count).toBe(all.body.items.length);
      const page = await suite.t.http().get(base()).query({ limit: 1, skip: 1, sort: 'slug desc' }).set(authHeader(suite.admin));
      expect(page.body.items).toHaveLength(1);

      const query = await suite.t
        .http()
        .post(`${base()}/_query`)
        .query({ with_count: true, sort: 'sys.created_at asc' })
        .set(authHeader(suite.admin))
        .send({ where: { description: marker, $or: [{ allow_additional_properties: true }, { 'properties.p2.type': 'string' }] }, select: { slug: 1 } });
      expect(query.status).toBe(200);
      expect(query.body).toEqual({
        items: [
          { _id: types[1]._id, slug: types[1].slug },
          { _id: types[2]._id, slug: types[2].slug },
        ],
        count: 2,
      });

      const bad = await post(`${base()}/_query`, { where: { name: { $regex: '.*' } } });
      expect(bad.status).toBe(400);
      expect(bad.body.errorCode).toBe('InvalidQuery');
      const stray = await post(`${base()}/_query`, { filter: { name: 'x' } });
      expect(stray.status).toBe(400);
      expect(stray.body.errorCode).toBe('InvalidQuery');
      const badSort = await suite.t.http().get(base()).query({ sort: 'description' }).set(authHeader(suite.admin));
      expect(badSort.status).toBe(400);
    });
  });

  describe('update', () => {
    it('replaces a user type; records UserTypeUpdated with prior', async () => {
      const type = await createUserType(suite.t, suite.admin, { properties: { a: { type: 'string' } } });
      const res = await put(`${base()}/${type._id}`, { name: 'Renamed', properties: { b: { type: 'number', required: true } }, allow_additional_properties: true });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        _id: type._id,
        name: 'Renamed',
        slug: type.slug,
        description: null,
        properties: { b: { type: 'number', required: true, unique: false } },
        allow_additional_properties: true,
        sys: { created_at: type.sys.created_at, created_by: suite.admin.userId, modified_at: expect.any(String), modified_by: suite.admin.userId },
      });
      const [event] = await eventsAbout(suite.t, suite.admin.membershipId, 'UserTypeUpdated', type._id);
      expect(event.document).toEqual(res.body);
      expect(event.prior).toEqual(type);
    });

    it('answers 409 IdenticalDocumentError when nothing changes, whatever the key order', async () => {
      const type = await createUserType(suite.t, suite.admin, { properties: { a: { type: 'enum', values: ['x', 'y'], required: true }, b: { type: 'string' } } });
      const res = await put(`${base()}/${type._id}`, { name: type.name, properties: { b: { type: 'string', unique: false }, a: { required: true, values: ['x', 'y'], type: 'enum' } } });
      expect(res.status).toBe(409);
      expect(res.body.errorCode).toBe('IdenticalDocumentError');
    });

    it('refuses a slug change, invalid properties and unknown ids', async () => {
      const type = await createUserType(suite.t, suite.admin, {});
      const slug = await put(`${base()}/${type._id}`, { name: type.name, slug: 'another-slug' });
      expect(slug.status).toBe(400);
      expect(slug.body.errors).toEqual([{ field: 'slug', message: expect.any(String) }]);
      const same = await put(`${base()}/${type._id}`, { name: 'New name', slug: type.slug });
      expect(same.status).toBe(200);
      const bad = await put(`${base()}/${type._id}`, { name: 'x', properties: { a: { type: 'enum' } } });
      expect(bad.status).toBe(400);
      const missing = await put(`${base()}/nope`, { name: 'x' });
      expect(missing.status).toBe(404);
      expect(missing.body.errorCode).toBe('UserTypeNotFound');
    });

    it('applies a change to user validation at once on this instance (cache invalidated)', async () => {
      const type = await createUserType(suite.t, suite.admin, { properties: { a: { type: 'string' } } });
      const users = usersPath(suite.admin.membershipId);
      // Reads the type into the cache.
      expect((await post(users, userBody({ user_type: type.slug, a: 'x' }))).status).toBe(201);

      await put(`${base()}/${type._id}`, { name: type.name, properties: { a: { type: 'string' }, b: { type: 'integer', required: true } } })
        .expect(200);
      const missingB = await post(users, userBody({ user_type: type.slug, a: 'x' }));
      expect(missingB.status).toBe(400);
      expect(missingB.body.errors).toEqual([{ field: 'b', message: 'is required' }]);
      expect((await post(users, userBody({ user_type: type.slug, b: 1 }))).status).toBe(201);
    });

    it('makes a new type usable at once after a user named it before it existed', async () => {
      const slug = unique('later');
      const users = usersPath(suite.admin.membershipId);
      const before = await post(users, userBody({ user_type: slug }));
      expect(before.status).toBe(400);
      await createUserType(suite.t, suite.admin, { slug, properties: { c: { type: 'boolean' } } });
      const after = await post(users, userBody({ user_type: slug, c: true }));
      expect(after.status).toBe(201);
      expect(after.body.c).toBe(true);
    });
  });

  describe('delete', () => {
    it('deletes: 204, then 404; UserTypeDeleted with prior', async () => {
      const type = await createUserType(suite.t, suite.admin, {});
      const res = await del(`${base()}/${type._id}`);
      expect(res.status).toBe(204);
      expect((await get(`${base()}/${type._id}`)).status).toBe(404);
      const again = await del(`${base()}/${type._id}`);
      expect(again.status).toBe(404);
      expect(again.body.errorCode).toBe('UserTypeNotFound');
      const [event] = await eventsAbout(suite.t, suite.admin.membershipId, 'UserTypeDeleted', type._id);
      expect(event.document).toEqual({});
      expect(event.prior).toEqual(type);
    });

    it('allows deleting a type in use: its users keep their fields and stay editable; other users cannot take the type', async () => {
      const type = await createUserType(suite.t, suite.admin, { properties: { level: { type: 'integer', required: true } } });
      const user = await createUser(suite.t, suite.admin, { user_type: type.slug, level: 3 });
      await del(`${base()}/${type._id}`).expect(204);

      const users = usersPath(suite.admin.membershipId);
      const kept = await get(`${users}/${user._id}`);
      expect(kept.body).toMatchObject({ user_type: type.slug, level: 3 });
      const edited = await put(`${users}/${user._id}`, putBodyOf(user, { firstname: 'Still here', level: 4 }));
      expect(edited.status).toBe(200);
      expect(edited.body).toMatchObject({ user_type: type.slug, level: 4, firstname: 'Still here' });

      const newcomer = await post(users, userBody({ user_type: type.slug, level: 1 }));
      expect(newcomer.status).toBe(400);
      expect(newcomer.body.errors).toEqual([{ field: 'user_type', message: expect.any(String) }]);
    });

    it('bulk-deletes; unknown ids are not found', async () => {
      const a = await createUserType(suite.t, suite.admin, {});
      const b = await createUserType(suite.t, suite.admin, {});
      const res = await del(base(), { ids: [a._id, 'nope', b._id] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ deleted: [a._id, b._id], not_found: ['nope'] });
      expect(await eventsAbout(suite.t, suite.admin.membershipId, 'UserTypeDeleted', b._id)).toHaveLength(1);
      const empty = await del(base(), { ids: [] });
      expect(empty.status).toBe(400);
    });
  });
});
