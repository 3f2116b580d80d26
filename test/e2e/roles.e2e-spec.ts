import { as, createApplication, createApplicationWithPermissions, createRole, expectErrorBody, hostileQueries, queryEventsAbout, signIn, slugOfName, unique, useTenants } from '../support/api';

describe('roles API', () => {
  const suite = useTenants();
  let base: string;
  beforeAll(() => (base = `/memberships/${suite.tenant.membershipId}/roles`));

  const { get, post, put, del } = as(() => suite.t, () => suite.tenant.admin);

  const eventsOf = (type: string, resourceId: string) => queryEventsAbout(suite.t, suite.tenant.admin, type, resourceId);

  describe('create and read', () => {
    it('creates a role (slug from the name), reads it, and records RoleCreated', async () => {
      const name = unique('Support Agents');
      const res = await post(base, { name, description: 'Front line', permissions: [' users.read ', 'events.read.*', 'x.webhooks.read.y'], forbidden: ['users.delete'] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        _id: expect.any(String),
        name,
        slug: slugOfName(name),
        description: 'Front line',
        // Stored trimmed, otherwise as written.
        permissions: ['users.read', 'events.read.*', 'x.webhooks.read.y'],
        forbidden: ['users.delete'],
        membership_id: suite.tenant.membershipId,
        sys: { created_at: expect.any(String), created_by: suite.tenant.admin.userId },
      });
      const read = await get(`${base}/${res.body._id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);

      const events = await eventsOf('RoleCreated', res.body._id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ utilizer_id: suite.tenant.admin.userId, document: res.body, prior: null });
    });

    it('defaults description to null and the lists to []', async () => {
      const res = await post(base, { name: unique('Bare') });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ description: null, permissions: [], forbidden: [] });
    });

    it('answers 404 RoleNotFound for an unknown id and for a role of another membership', async () => {
      expectErrorBody(await get(`${base}/00000000-0000-4000-8000-000000000000`), 404, 'RoleNotFound');
      const foreign = await createRole(suite.t, suite.other.admin);
      expectErrorBody(await get(`${base}/${foreign._id}`), 404, 'RoleNotFound');
    });

    it('reserves the admin slug and refuses duplicate slugs', async () => {
      expectErrorBody(await post(base, { name: 'Boss', slug: 'admin' }), 409, 'ReservedRole');
      // The slug derived from the name is reserved too.
      expectErrorBody(await post(base, { name: 'Admin' }), 409, 'ReservedRole');
      const slug = unique('dup').toLowerCase();
      expect((await post(base, { name: 'First', slug })).status).toBe(201);
      expectErrorBody(await post(base, { name: 'Second', slug }), 409, 'RoleAlreadyExists');
      // The same slug in another membership is fine.
      expect((await post(`/memberships/${suite.other.membershipId}/roles`, { name: 'Other', slug }, suite.other.admin.auth)).status).toBe(201);
    });

    it.each([
      ['name missing', {}, 'name'],
      ['name not a string', { name: 42 }, 'name'],
      ['name too long', { name: 'n'.repeat(129) }, 'name'],
      ['slug with capitals', { name: 'x', slug: 'Bad' }, 'slug'],
      ['slug too long', { name: 'x', slug: 'a'.repeat(65) }, 'slug'],
      ['description too long', { name: 'x', description: 'd'.repeat(1025) }, 'description'],
      ['permissions not an array', { name: 'x', permissions: 'users.read' }, 'permissions'],
      ['permissions with a number', { name: 'x', permissions: ['users.read', 7] }, 'permissions'],
      ['forbidden not an array', { name: 'x', forbidden: { a: 1 } }, 'forbidden'],
      ['too many permissions', { name: 'x', permissions: Array.from({ length: 1001 }, () => 'users.read') }, 'permissions'],
      // Refused by the body budget (2000 array elements in all) before the DTO sees it.
      ['a huge list', { name: 'x', permissions: Array.from({ length: 2001 }, () => 'users.read') }, 'request.body'],
      ['unknown field', { name: 'x', membership_id: 'elsewhere' }, 'membership_id'],
      ['server-managed field', { name: 'x', sys: {} }, 'sys'],
    ])('rejects an invalid body (%s) with 400 ModelValidationError', async (_name, body, field) => {
      const res = await post(base, body);
      expectErrorBody(res, 400, 'ModelValidationError');
      expect((res.body.errors as { field: string }[]).map((e) => e.field)).toContain(field);
    });

    it.each([
      ['permissions', 'users read', 1],
      ['permissions', 'a.b.c.d.e', 1],
      ['permissions', 'user*.read', 1],
      ['permissions', 'users..read', 1],
      ['permissions', '', 1],
      ['forbidden', 'users.read.a b', 0],
      ['forbidden', 'users.re\nad', 0],
    ])('rejects an invalid expression in %s (%j) with 400 InvalidPermission naming it', async (field, expression, index) => {
      const list = index === 1 ? ['users.read', expression] : [expression];
      const res = await post(base, { name: unique('bad'), [field]: list });
      expectErrorBody(res, 400, 'InvalidPermission');
      expect(res.body.message).toContain(`${field}[${index}]`);
      expect(res.body.message).toContain(JSON.stringify(expression.trim()));
      expect(res.body.errors).toEqual([{ field: `${field}[${index}]`, message: expect.any(String) }]);
    });

    it('refuses callers without roles.create, and other memberships', async () => {
      const reader = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['roles.read']);
      expectErrorBody(await post(base, { name: 'x' }, reader.auth), 403, 'AccessDenied');
      expectErrorBody(await get(base, suite.other.admin.auth), 403, 'AccessDenied');
      expectErrorBody(await post(base, { name: 'x' }, suite.other.admin.auth), 403, 'AccessDenied');
      expectErrorBody(await get('/memberships/00000000-0000-4000-8000-000000000000/roles'), 404, 'MembershipNotFound');
      expectErrorBody(await suite.t.http().get(base), 401, 'InvalidToken');
    });
  });

  describe('list, query and search', () => {
    const tag = unique('lq').toLowerCase();
    const slugs = ['a', 'b', 'c'].map((k) => `${tag}-${k}`);
    const ids: string[] = [];

    beforeAll(async () => {
      const specs = [
        { description: 'alpha role', permissions: ['users.read'], forbidden: [] },
        { description: null, permissions: ['users.read', 'events.read'], forbidden: ['users.delete'] },
        { description: 'gamma role', permissions: ['webhooks.*'], forbidden: [] },
      ];
      for (let i = 0; i < 3; i++) {
        const role = await createRole(suite.t, suite.tenant.admin, { name: `${tag} ${i}`, slug: slugs[i], ...specs[i] });
        ids.push(role._id);
      }
    });

    const mine = { slug: { $in: slugs } };
    const query = (where: object, params = '', select?: object) => post(`${base}/_query${params}`, { where: { $and: [mine, where] }, select });
    const slugsOf = (res: { body: { items: { slug: string }[] } }): string[] => res.body.items.map((r) => r.slug).sort();

    it('lists with paging, with_count and sort', async () => {
      const all = await get(`${base}?with_count=true`);
      expect(all.status).toBe(200);
      expect(all.body.count).toBe(all.body.items.length);
      expect((all.body.items as { slug: string }[]).map((r) => r.slug)).toEqual(expect.arrayContaining(['admin', ...slugs]));
      // Another membership's roles never appear.
      expect((all.body.items as { membership_id: string }[]).every((r) => r.membership_id === suite.tenant.membershipId)).toBe(true);

      const page = await get(`${base}?limit=2&skip=1&with_count=true`);
      expect(page.body.items.map((r: { _id: string }) => r._id)).toEqual(all.body.items.slice(1, 3).map((r: { _id: string }) => r._id));
      expect(page.body.count).toBe(all.body.count);
      const noCount = await get(`${base}?limit=1`);
      expect(noCount.body).not.toHaveProperty('count');

      const sorted = await query({}, '?sort=slug%20desc');
      expect(sorted.body.items.map((r: { slug: string }) => r.slug)).toEqual([...slugs].reverse());
      const counted = await query({ description: { $exists: true } }, '?limit=1&with_count=true');
      expect(counted.body.items).toHaveLength(1);
      expect(counted.body.count).toBe(2);
    });

    it.each([
      ['implicit equality', { slug: 1 }, [1]],
      ['$eq', { name: { $eq: 0 } }, [0]],
      ['$ne', { slug: { $ne: 0 } }, [1, 2]],
      ['$in', { slug: { $in: [0, 2] } }, [0, 2]],
      ['$nin', { slug: { $nin: [0, 2] } }, [1]],
      ['$gt', { slug: { $gt: 0 } }, [1, 2]],
      ['$gte', { slug: { $gte: 1 } }, [1, 2]],
      ['$lt', { slug: { $lt: 1 } }, [0]],
      ['$lte', { slug: { $lte: 1 } }, [0, 1]],
      ['$exists', { description: { $exists: false } }, [1]],
      ['$and', { $and: [{ permissions: 'users.read' }, { forbidden: 'users.delete' }] }, [1]],
      ['$or', { $or: [{ permissions: 'webhooks.*' }, { description: 'alpha role' }] }, [0, 2]],
      ['list contains ($in)', { permissions: { $in: ['events.read', 'webhooks.*'] } }, [1, 2]],
      ['timestamp', { 'sys.created_at': { $lte: '2999-01-01T00:00:00.000Z' } }, [0, 1, 2]],
    ])('_query %s', async (_name, where, expected) => {
      // Numbers in the table stand for the n-th role's slug (or name for "name").
      const resolved = JSON.parse(
        JSON.stringify(where, (key, value: unknown) => {
          if (typeof value === 'number') return key === '$eq' && JSON.stringify(where).includes('"name"') ? `${tag} ${value}` : slugs[value];
          return value;
        }),
      ) as object;
      const res = await query(resolved);
      expect(res.status).toBe(200);
      expect(slugsOf(res)).toEqual(expected.map((i) => slugs[i]));
    });

    it('_query projects with select', async () => {
      const res = await post(`${base}/_query`, { where: { _id: ids[0] }, select: { slug: 1, permissions: 1 } });
      expect(res.body.items).toEqual([{ _id: ids[0], slug: slugs[0], permissions: ['users.read'] }]);
      const excluded = await post(`${base}/_query`, { where: { _id: ids[0] }, select: { description: 0, forbidden: 0, permissions: 0 } });
      expect(excluded.body.items).toEqual([{ _id: ids[0], name: `${tag} 0`, slug: slugs[0], membership_id: suite.tenant.membershipId, sys: expect.any(Object) }]);
      expectErrorBody(await post(`${base}/_query`, { select: { slug: 1, name: 0 } }), 400, 'InvalidQuery');
    });

    it.each(hostileQueries('name', 'password_hash').filter((q) => !/hidden/.test(q.name)))(
      'refuses a hostile _query ($name) with 400 InvalidQuery',
      async ({ body }) => {
        expectErrorBody(await post(`${base}/_query`, body), 400, 'InvalidQuery');
      },
    );

    it('treats SQL in a value as a plain value, and cannot widen to another membership', async () => {
      const sqlValue = await post(`${base}/_query`, { where: { name: "' or 1=1 --" } });
      expect(sqlValue.status).toBe(200);
      expect(sqlValue.body.items).toEqual([]);
      const foreign = await createRole(suite.t, suite.other.admin);
      const widened = await post(`${base}/_query`, { where: { $or: [{ membership_id: suite.other.membershipId }, { _id: foreign._id }] } });
      expect(widened.status).toBe(200);
      expect(widened.body.items).toEqual([]);
    });

    it.each([
      ['limit=1001', 'limit'],
      ['skip=x', 'skip'],
      ['sort=name', 'sort'],
      ['sort=permissions', 'sort'],
    ])('rejects list parameter %s with 400 InvalidQuery', async (params, name) => {
      const res = await get(`${base}?${params}`);
      expectErrorBody(res, 400, 'InvalidQuery');
      expect(res.body.message).toContain(name);
    });

    it('searches by keyword in name, slug or description, case-insensitively and literally', async () => {
      const res = await get(`${base}/search?keyword=${encodeURIComponent('GAMMA')}&with_count=true`);
      expect(res.status).toBe(200);
      expect(res.body.items.map((r: { slug: string }) => r.slug)).toEqual([slugs[2]]);
      expect(res.body.count).toBe(1);
      const byTag = await get(`${base}/search?keyword=${tag}&sort=slug%20desc`);
      expect(byTag.body.items.map((r: { slug: string }) => r.slug)).toEqual([...slugs].reverse());
      // LIKE wildcards in the keyword are literal.
      expect((await get(`${base}/search?keyword=${encodeURIComponent('%')}`)).body.items).toEqual([]);
      expect((await get(`${base}/search?keyword=${encodeURIComponent('_')}`)).body.items).toEqual([]);
      expectErrorBody(await get(`${base}/search`), 400, 'ModelValidationError');
      expectErrorBody(await get(`${base}/search?keyword=${'k'.repeat(129)}`), 400, 'ModelValidationError');
    });
  });

  describe('update', () => {
    it('replaces a role, records RoleUpdated with the prior, and answers 409 for an identical update', async () => {
      const role = await createRole(suite.t, suite.tenant.admin, { description: 'before', permissions: ['users.read'] });
      const body = { name: 'Renamed', permissions: ['users.read', 'users.update'], forbidden: ['users.update.someone'] };
      const res = await put(`${base}/${role._id}`, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...role,
        name: 'Renamed',
        // Omitted: back to its default.
        description: null,
        permissions: body.permissions,
        forbidden: body.forbidden,
        sys: { ...role.sys, modified_at: expect.any(String), modified_by: suite.tenant.admin.userId },
      });
      expectErrorBody(await put(`${base}/${role._id}`, body), 409, 'IdenticalDocumentError');
      expectErrorBody(await put(`${base}/${role._id}`, { ...body, slug: role.slug }), 409, 'IdenticalDocumentError');

      const events = await eventsOf('RoleUpdated', role._id);
      expect(events).toHaveLength(1);
      expect(events[0].document).toEqual(res.body);
      expect(events[0].prior).toEqual(role);
    });

    it('keeps the slug: a different one is 400, the admin role is read-only, unknown ids are 404', async () => {
      const role = await createRole(suite.t, suite.tenant.admin);
      const changed = await put(`${base}/${role._id}`, { name: 'x', slug: 'another-slug' });
      expectErrorBody(changed, 400, 'ModelValidationError');
      expect(changed.body.errors[0].field).toBe('slug');
      expectErrorBody(await put(`${base}/${suite.tenant.role._id}`, { name: 'Admin', permissions: [] }), 409, 'ReservedRole');
      expectErrorBody(await put(`${base}/00000000-0000-4000-8000-000000000000`, { name: 'x' }), 404, 'RoleNotFound');
      const foreign = await createRole(suite.t, suite.other.admin);
      expectErrorBody(await put(`${base}/${foreign._id}`, { name: 'x' }), 404, 'RoleNotFound');
    });

    it('validates the update body like the create body', async () => {
      const role = await createRole(suite.t, suite.tenant.admin);
      expectErrorBody(await put(`${base}/${role._id}`, { permissions: [] }), 400, 'ModelValidationError');
      expectErrorBody(await put(`${base}/${role._id}`, { name: 'x', forbidden: ['*.*.*.*.*'] }), 400, 'InvalidPermission');
    });

    it('a role change is visible at once: a user whose role loses a permission gets 403 on the next request', async () => {
      const role = await createRole(suite.t, suite.tenant.admin, { permissions: ['roles.read', 'applications.read'] });
      const username = unique('agent');
      const created = await post(`/memberships/${suite.tenant.membershipId}/users`, {
        username,
        email_address: `${username}@example.com`,
        password: 'agent password 1',
        role: role.slug,
      });
      expect(created.status).toBe(201);
      const agent = await signIn(suite.t, suite.tenant.membershipId, username, 'agent password 1');
      expect((await get(base, agent.auth)).status).toBe(200);

      expect((await put(`${base}/${role._id}`, { name: role.name, permissions: ['applications.read'] })).status).toBe(200);
      expectErrorBody(await get(base, agent.auth), 403, 'AccessDenied');
      expect((await get(`/memberships/${suite.tenant.membershipId}/applications`, agent.auth)).status).toBe(200);

      // And back: granted again at once.
      expect((await put(`${base}/${role._id}`, { name: role.name, permissions: ['applications.read', 'roles.read'] })).status).toBe(200);
      expect((await get(base, agent.auth)).status).toBe(200);
    });

    it('a forbidden entry added to a role denies at once (application caller)', async () => {
      const app = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['roles.*']);
      expect((await get(base, app.auth)).status).toBe(200);
      expect((await put(`${base}/${app.role._id}`, { name: app.role.name, permissions: ['roles.*'], forbidden: ['roles.read'] })).status).toBe(200);
      expectErrorBody(await get(base, app.auth), 403, 'AccessDenied');
    });

    it('creating a role applies at once to a caller that already names it', async () => {
      const slug = unique('later').toLowerCase();
      const app = await createApplication(suite.t, suite.tenant.admin, { name: unique('early') });
      // Point the application at a slug whose role does not exist yet: refused (400 on role).
      const early = await put(`/memberships/${suite.tenant.membershipId}/applications/${app.id}`, { name: app.application.name, role: slug });
      expectErrorBody(early, 400, 'ModelValidationError');
      const role = await createRole(suite.t, suite.tenant.admin, { slug, permissions: ['roles.read'] });
      expect((await put(`/memberships/${suite.tenant.membershipId}/applications/${app.id}`, { name: app.application.name, role: role.slug })).status).toBe(200);
      expect((await get(base, app.auth)).status).toBe(200);
    });
  });

  describe('delete', () => {
    it('deletes a role (RoleDeleted with the prior), then 404; its holders lose its permissions at once', async () => {
      const app = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['roles.read']);
      expect((await get(base, app.auth)).status).toBe(200);
      expect((await del(`${base}/${app.role._id}`)).status).toBe(204);
      expectErrorBody(await get(`${base}/${app.role._id}`), 404, 'RoleNotFound');
      expectErrorBody(await del(`${base}/${app.role._id}`), 404, 'RoleNotFound');
      expectErrorBody(await get(base, app.auth), 403, 'AccessDenied');
      const events = await eventsOf('RoleDeleted', app.role._id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ document: {}, prior: app.role, utilizer_id: suite.tenant.admin.userId });
    });

    it('refuses to delete the admin role (409 SystemRolesCannotBeDeleted) and needs roles.delete', async () => {
      expectErrorBody(await del(`${base}/${suite.tenant.role._id}`), 409, 'SystemRolesCannotBeDeleted');
      const role = await createRole(suite.t, suite.tenant.admin);
      const reader = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['roles.read']);
      expectErrorBody(await del(`${base}/${role._id}`, undefined, reader.auth), 403, 'AccessDenied');
      const foreign = await createRole(suite.t, suite.other.admin);
      expectErrorBody(await del(`${base}/${foreign._id}`), 404, 'RoleNotFound');
      expect((await get(`/memberships/${suite.other.membershipId}/roles/${foreign._id}`, suite.other.admin.auth)).status).toBe(200);
    });

    it('bulk-deletes own ids; foreign and unknown ids are not found and untouched', async () => {
      const own = [await createRole(suite.t, suite.tenant.admin), await createRole(suite.t, suite.tenant.admin)];
      const foreign = await createRole(suite.t, suite.other.admin);
      const unknown = '00000000-0000-4000-8000-000000000000';
      const ids = [own[0]._id, foreign._id, unknown, own[1]._id, own[0]._id];
      const res = await del(base, { ids });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ deleted: [own[0]._id, own[1]._id], not_found: [foreign._id, unknown] });
      expect((await get(`/memberships/${suite.other.membershipId}/roles/${foreign._id}`, suite.other.admin.auth)).status).toBe(200);
      for (const role of own) {
        expectErrorBody(await get(`${base}/${role._id}`), 404, 'RoleNotFound');
        expect(await eventsOf('RoleDeleted', role._id)).toHaveLength(1);
      }
    });

    it('refuses a bulk delete that includes the admin role, deleting nothing', async () => {
      const role = await createRole(suite.t, suite.tenant.admin);
      expectErrorBody(await del(base, { ids: [role._id, suite.tenant.role._id] }), 409, 'SystemRolesCannotBeDeleted');
      expect((await get(`${base}/${role._id}`)).status).toBe(200);
    });

    it('applies per-id forbidden entries to a bulk delete', async () => {
      const protectedRole = await createRole(suite.t, suite.tenant.admin);
      const loose = await createRole(suite.t, suite.tenant.admin);
      const deleter = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['roles.delete'], [`roles.delete.${protectedRole._id}`]);
      expectErrorBody(await del(base, { ids: [loose._id, protectedRole._id] }, deleter.auth), 403, 'AccessDenied');
      expect((await get(`${base}/${loose._id}`)).status).toBe(200);
      expect((await del(base, { ids: [loose._id] }, deleter.auth)).body).toEqual({ deleted: [loose._id], not_found: [] });
    });

    it.each([
      ['no body', undefined],
      ['no ids', {}],
      ['empty ids', { ids: [] }],
      ['ids not an array', { ids: 'abc' }],
      ['ids with a number', { ids: ['a', 1] }],
      ['ids with an empty string', { ids: [''] }],
      ['1001 ids', { ids: Array.from({ length: 1001 }, (_, i) => `id-${i}`) }],
      ['unknown field', { ids: ['a'], all: true }],
    ])('rejects a bulk delete with %s (400 ModelValidationError)', async (_name, body) => {
      expectErrorBody(await del(base, body), 400, 'ModelValidationError');
    });
  });
});
