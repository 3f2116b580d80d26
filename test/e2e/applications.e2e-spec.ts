import { as, createApplication, createApplicationWithPermissions, createRole, expectErrorBody, hostileQueries, queryEventsAbout, slugOfName, unique, useTenants } from '../support/api';

describe('applications API', () => {
  const suite = useTenants();
  let base: string;
  beforeAll(() => (base = `/memberships/${suite.tenant.membershipId}/applications`));

  const { get, post, put, del } = as(() => suite.t, () => suite.tenant.admin);

  const eventsOf = (type: string, resourceId: string) => queryEventsAbout(suite.t, suite.tenant.admin, type, resourceId);

  describe('the oidc block: the application as a client of its membership\'s OpenID Provider', () => {
    it('is stored with its defaults, answered and recorded; a PUT without it makes the application no client', async () => {
      const created = await post(base, { name: unique('web app'), oidc: { redirect_uris: ['https://app.example.com/callback', 'http://127.0.0.1:8080/cb'] } });
      expect(created.status).toBe(201);
      const oidc = {
        redirect_uris: ['https://app.example.com/callback', 'http://127.0.0.1:8080/cb'],
        post_logout_redirect_uris: [],
        grant_types: ['authorization_code', 'refresh_token'],
        public: false,
        require_consent: true,
      };
      expect(created.body.oidc).toEqual(oidc);
      expect((await get(`${base}/${created.body._id}`)).body.oidc).toEqual(oidc);
      expect((await eventsOf('ApplicationCreated', created.body._id))[0].document.oidc).toEqual(oidc);

      const spa = {
        redirect_uris: ['http://localhost:5173/callback'],
        post_logout_redirect_uris: ['http://[::1]:5173/'],
        grant_types: ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code'],
        public: true,
        require_consent: false,
      };
      const updated = await put(`${base}/${created.body._id}`, { name: created.body.name, oidc: spa });
      expect(updated.status).toBe(200);
      expect(updated.body.oidc).toEqual(spa);
      const cleared = await put(`${base}/${created.body._id}`, { name: created.body.name });
      expect(cleared.body.oidc).toBeNull();
    });

    it.each([
      ['no redirect URI', { redirect_uris: [] }, 'redirect_uris'],
      ['eleven redirect URIs', { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://app.example.com/${i}`) }, 'redirect_uris'],
      ['a relative URI', { redirect_uris: ['/callback'] }, 'oidc.redirect_uris.0'],
      ['plain http to another host', { redirect_uris: ['http://app.example.com/cb'] }, 'oidc.redirect_uris.0'],
      ['a fragment', { redirect_uris: ['https://app.example.com/cb#x'] }, 'oidc.redirect_uris.0'],
      ['credentials', { redirect_uris: ['https://user:pw@app.example.com/cb'] }, 'oidc.redirect_uris.0'],
      ['another scheme', { redirect_uris: ['https://ok.example.com/', 'javascript:alert(1)'] }, 'oidc.redirect_uris.1'],
      ['a bad logout URI', { redirect_uris: ['https://app.example.com/cb'], post_logout_redirect_uris: ['ftp://app.example.com/'] }, 'oidc.post_logout_redirect_uris.0'],
      ['an unknown grant', { redirect_uris: ['https://app.example.com/cb'], grant_types: ['password'] }, 'grant_types'],
      ['refresh_token alone', { redirect_uris: ['https://app.example.com/cb'], grant_types: ['refresh_token'] }, 'oidc.grant_types'],
      ['a public client with client_credentials', { redirect_uris: ['https://app.example.com/cb'], public: true, grant_types: ['client_credentials'] }, 'oidc.grant_types'],
      ['a string for the list', { redirect_uris: 'https://app.example.com/cb' }, 'redirect_uris'],
      ['a string for a flag', { redirect_uris: ['https://app.example.com/cb'], public: 'yes' }, 'public'],
    ])('refuses %s with 400 naming the field, and stores nothing', async (_what, oidc, field) => {
      const name = unique('refused');
      const res = await post(base, { name, oidc });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body)).toContain(field);
      const listed = await post(`${base}/_query`, { where: { name } });
      expect(listed.body.items).toEqual([]);
    });
  });

  describe('create and read', () => {
    it('creates an application with its secret shown once; reads never show it', async () => {
      const role = await createRole(suite.t, suite.tenant.admin, { permissions: ['applications.read'] });
      const name = unique('Billing Backend');
      const res = await post(base, { name, description: 'bills', role: role.slug, permissions: ['events.read'], forbidden: ['events.read.x'] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        _id: expect.any(String),
        name,
        slug: slugOfName(name),
        description: 'bills',
        role: role.slug,
        permissions: ['events.read'],
        forbidden: ['events.read.x'],
        is_active: true,
        oidc: null,
        membership_id: suite.tenant.membershipId,
        sys: { created_at: expect.any(String), created_by: suite.tenant.admin.userId },
        secret: expect.any(String),
      });
      expect(res.body.secret.length).toBeGreaterThanOrEqual(43);
      const { secret, ...application } = res.body;

      const read = await get(`${base}/${res.body._id}`);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(application);
      const list = await post(`${base}/_query`, { where: { _id: res.body._id } });
      expect(list.body.items).toEqual([application]);
      expect(JSON.stringify(list.body)).not.toContain(secret);

      // The Basic token works at once, and /me answers the application without its secret.
      const me = await get('/me', `Basic ${res.body._id}:${secret}`);
      expect(me.status).toBe(200);
      expect(me.body._id).toBe(res.body._id);
      expect(JSON.stringify(me.body)).not.toContain(secret);

      const events = await eventsOf('ApplicationCreated', res.body._id);
      expect(events).toHaveLength(1);
      expect(events[0].document).toEqual(application);
      expect(JSON.stringify(events)).not.toMatch(new RegExp(`${secret}|secret`));
    });

    it('defaults: no role, empty lists, active; an inactive application cannot authenticate', async () => {
      const bare = await post(base, { name: unique('bare') });
      expect(bare.body).toMatchObject({ role: null, description: null, permissions: [], forbidden: [], is_active: true });
      const inactive = await post(base, { name: unique('off'), is_active: false, permissions: ['applications.read'] });
      expect(inactive.status).toBe(201);
      expectErrorBody(await get(base, `Basic ${inactive.body._id}:${inactive.body.secret}`), 401, 'InvalidToken');
    });

    it('answers 400 on `role` when the role does not exist in this membership', async () => {
      const foreignRole = await createRole(suite.t, suite.other.admin);
      for (const role of ['no-such-role', foreignRole.slug]) {
        const res = await post(base, { name: unique('x'), role });
        expectErrorBody(res, 400, 'ModelValidationError');
        expect(res.body.errors).toEqual([{ field: 'role', message: expect.stringContaining('no role') }]);
      }
    });

    it('refuses a duplicate slug (409 ApplicationAlreadyExists), not across memberships', async () => {
      const slug = unique('dup').toLowerCase();
      expect((await post(base, { name: 'a', slug })).status).toBe(201);
      expectErrorBody(await post(base, { name: 'b', slug }), 409, 'ApplicationAlreadyExists');
      expect((await post(`/memberships/${suite.other.membershipId}/applications`, { name: 'c', slug }, suite.other.admin.auth)).status).toBe(201);
    });

    it.each([
      ['name missing', {}, 'name'],
      ['name empty', { name: '' }, 'name'],
      ['slug invalid', { name: 'x', slug: 'no_underscores' }, 'slug'],
      ['role not a string', { name: 'x', role: 5 }, 'role'],
      ['is_active a string', { name: 'x', is_active: 'yes' }, 'is_active'],
      ['permissions not strings', { name: 'x', permissions: [{}] }, 'permissions'],
      ['forbidden not an array', { name: 'x', forbidden: 'users.read' }, 'forbidden'],
      ['secret given', { name: 'x', secret: 'chosen-by-me' }, 'secret'],
      ['digest given', { name: 'x', secret_digest: 'abc' }, 'secret_digest'],
      ['unknown field', { name: 'x', owner: 'me' }, 'owner'],
    ])('rejects an invalid body (%s) with 400 ModelValidationError', async (_name, body, field) => {
      const res = await post(base, body);
      expectErrorBody(res, 400, 'ModelValidationError');
      expect((res.body.errors as { field: string }[]).map((e) => e.field)).toContain(field);
    });

    it.each([
      ['permissions', ['users.read', 'users.*read']],
      ['forbidden', ['a.b.c.d.e']],
    ])('rejects an invalid expression in %s with 400 InvalidPermission', async (field, list) => {
      const res = await post(base, { name: unique('x'), [field]: list });
      expectErrorBody(res, 400, 'InvalidPermission');
      expect(res.body.message).toContain(`${field}[${list.length - 1}]`);
      expect(res.body.message).toContain(JSON.stringify(list[list.length - 1]));
    });

    it('answers 404 ApplicationNotFound for unknown and foreign ids; 403 for other memberships and missing permissions', async () => {
      expectErrorBody(await get(`${base}/00000000-0000-4000-8000-000000000000`), 404, 'ApplicationNotFound');
      const foreign = await createApplication(suite.t, suite.other.admin);
      expectErrorBody(await get(`${base}/${foreign.id}`), 404, 'ApplicationNotFound');
      expectErrorBody(await get(base, foreign.auth), 403, 'AccessDenied');
      const reader = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['applications.read']);
      expectErrorBody(await post(base, { name: 'x' }, reader.auth), 403, 'AccessDenied');
      expectErrorBody(await post(`${base}/${reader.id}/secret`, undefined, reader.auth), 403, 'AccessDenied');
      // Own-id permissions only: may read itself, not the others.
      const self = await createApplication(suite.t, suite.tenant.admin, { name: unique('self') });
      const selfRole = await createRole(suite.t, suite.tenant.admin, { permissions: [`applications.read.${self.id}`] });
      expect((await put(`${base}/${self.id}`, { name: self.application.name, role: selfRole.slug })).status).toBe(200);
      expect((await get(`${base}/${self.id}`, self.auth)).status).toBe(200);
      expectErrorBody(await get(`${base}/${reader.id}`, self.auth), 403, 'AccessDenied');
      expectErrorBody(await get(base, self.auth), 403, 'AccessDenied');
    });
  });

  describe('list, query and search', () => {
    const tag = unique('lq').toLowerCase();
    const slugs = ['a', 'b', 'c'].map((k) => `${tag}-${k}`);
    let roleSlug: string;

    beforeAll(async () => {
      roleSlug = (await createRole(suite.t, suite.tenant.admin)).slug;
      await createApplication(suite.t, suite.tenant.admin, { name: `${tag} zero`, slug: slugs[0], role: roleSlug, description: 'first of three' });
      await createApplication(suite.t, suite.tenant.admin, { name: `${tag} one`, slug: slugs[1], is_active: false, permissions: ['users.read'] });
      await createApplication(suite.t, suite.tenant.admin, { name: `${tag} two`, slug: slugs[2], role: roleSlug, permissions: ['users.read', 'events.read'] });
    });

    const mine = { slug: { $in: slugs } };
    const query = (where: object, params = '') => post(`${base}/_query${params}`, { where: { $and: [mine, where] } });
    const slugsOf = (res: { body: { items: { slug: string }[] } }): string[] => res.body.items.map((r) => r.slug).sort();

    it('lists with paging, with_count and sort; never another membership\'s', async () => {
      await createApplication(suite.t, suite.other.admin);
      const all = await get(`${base}?with_count=true&limit=1000`);
      expect(all.status).toBe(200);
      expect(all.body.count).toBe(all.body.items.length);
      expect((all.body.items as { membership_id: string }[]).every((a) => a.membership_id === suite.tenant.membershipId)).toBe(true);
      expect(JSON.stringify(all.body)).not.toMatch(/secret/);
      const page = await get(`${base}?limit=2&skip=1`);
      expect(page.body).not.toHaveProperty('count');
      expect(page.body.items.map((a: { _id: string }) => a._id)).toEqual(all.body.items.slice(1, 3).map((a: { _id: string }) => a._id));
      const sorted = await query({}, '?sort=slug%20desc&with_count=true&limit=2');
      expect(sorted.body.items.map((a: { slug: string }) => a.slug)).toEqual([slugs[2], slugs[1]]);
      expect(sorted.body.count).toBe(3);
    });

    it.each([
      ['implicit equality', { is_active: false }, [1]],
      ['$eq', { name: { $eq: 'NAME_zero' } }, [0]],
      ['$ne', { is_active: { $ne: false } }, [0, 2]],
      ['$in', { slug: { $in: ['SLUG_0', 'SLUG_1', 'nothing'] } }, [0, 1]],
      ['$nin', { slug: { $nin: ['SLUG_0', 'SLUG_1'] } }, [2]],
      ['$gt', { slug: { $gt: 'SLUG_1' } }, [2]],
      ['$gte', { slug: { $gte: 'SLUG_1' } }, [1, 2]],
      ['$lt', { slug: { $lt: 'SLUG_1' } }, [0]],
      ['$lte', { slug: { $lte: 'SLUG_1' } }, [0, 1]],
      ['$exists', { role: { $exists: true } }, [0, 2]],
      ['$and', { $and: [{ role: { $exists: true } }, { permissions: 'users.read' }] }, [2]],
      ['$or', { $or: [{ is_active: false }, { description: 'first of three' }] }, [0, 1]],
      ['timestamp', { 'sys.created_at': { $gt: '2000-01-01T00:00:00Z' }, 'sys.modified_at': { $exists: false } }, [0, 1, 2]],
    ])('_query %s', async (_name, where, expected) => {
      const text = JSON.stringify(where)
        .replace(/SLUG_(\d)/g, (_m, i: string) => slugs[Number(i)])
        .replace(/NAME_/g, `${tag} `);
      const res = await query(JSON.parse(text) as object);
      expect(res.status).toBe(200);
      expect(slugsOf(res)).toEqual(expected.map((i) => slugs[i]));
    });

    it('_query projects with select', async () => {
      const res = await post(`${base}/_query?sort=slug`, { where: mine, select: { slug: 1, is_active: 1 } });
      expect(res.body.items).toEqual(slugs.map((slug, i) => ({ _id: expect.any(String), slug, is_active: i !== 1 })));
    });

    it.each([...hostileQueries('name', 'secret_digest'), { name: 'filter on secret', body: { where: { secret: 'x' } } }])(
      'refuses a hostile _query ($name) with 400 InvalidQuery',
      async ({ body }) => {
        expectErrorBody(await post(`${base}/_query`, body), 400, 'InvalidQuery');
      },
    );

    it('refuses sorting by a hidden or unsortable field', async () => {
      expectErrorBody(await get(`${base}?sort=secret_digest`), 400, 'InvalidQuery');
      expectErrorBody(await get(`${base}?sort=name`), 400, 'InvalidQuery');
    });

    it('searches by keyword', async () => {
      const res = await get(`${base}/search?keyword=FIRST%20OF&with_count=true`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: [expect.objectContaining({ slug: slugs[0] })], count: 1 });
      expectErrorBody(await get(`${base}/search?keyword=`), 400, 'ModelValidationError');
    });
  });

  describe('update and secret rotation', () => {
    it('replaces an application (the secret is kept), records ApplicationUpdated, 409 when identical', async () => {
      const app = await createApplication(suite.t, suite.tenant.admin, { description: 'old', permissions: ['applications.read'] });
      const role = await createRole(suite.t, suite.tenant.admin, { permissions: ['roles.read'] });
      const body = { name: 'Renamed app', role: role.slug, permissions: [] };
      const res = await put(`${base}/${app.id}`, body);
      expect(res.status).toBe(200);
      const { secret: _secret, ...before } = app.application;
      expect(res.body).toEqual({
        ...before,
        name: 'Renamed app',
        description: null,
        role: role.slug,
        permissions: [],
        sys: { ...before.sys, modified_at: expect.any(String), modified_by: suite.tenant.admin.userId },
      });
      expectErrorBody(await put(`${base}/${app.id}`, body), 409, 'IdenticalDocumentError');
      // Same secret still works, with the new role's permissions.
      expect((await get(`/memberships/${suite.tenant.membershipId}/roles`, app.auth)).status).toBe(200);
      expectErrorBody(await get(base, app.auth), 403, 'AccessDenied');

      const events = await eventsOf('ApplicationUpdated', app.id);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ document: res.body, prior: before });
    });

    it('deactivation stops the Basic token at once; reactivation restores it', async () => {
      const app = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['applications.read']);
      expect((await get(base, app.auth)).status).toBe(200);
      const name = app.application.name as string;
      expect((await put(`${base}/${app.id}`, { name, role: app.role.slug, is_active: false })).status).toBe(200);
      expectErrorBody(await get(base, app.auth), 401, 'InvalidToken');
      expect((await put(`${base}/${app.id}`, { name, role: app.role.slug })).status).toBe(200);
      expect((await get(base, app.auth)).status).toBe(200);
    });

    it('validates updates and answers 404 / 409 as create does', async () => {
      const app = await createApplication(suite.t, suite.tenant.admin);
      const taken = await createApplication(suite.t, suite.tenant.admin);
      expectErrorBody(await put(`${base}/${app.id}`, { name: 'x', slug: taken.application.slug }), 409, 'ApplicationAlreadyExists');
      expectErrorBody(await put(`${base}/${app.id}`, { name: 'x', role: 'missing-role' }), 400, 'ModelValidationError');
      expectErrorBody(await put(`${base}/${app.id}`, { name: 'x', permissions: ['bad expression'] }), 400, 'InvalidPermission');
      expectErrorBody(await put(`${base}/${app.id}`, { slug: 'only-slug' }), 400, 'ModelValidationError');
      expectErrorBody(await put(`${base}/00000000-0000-4000-8000-000000000000`, { name: 'x' }), 404, 'ApplicationNotFound');
      const foreign = await createApplication(suite.t, suite.other.admin);
      expectErrorBody(await put(`${base}/${foreign.id}`, { name: 'x' }), 404, 'ApplicationNotFound');
    });

    it('rotates the secret: the old one is refused on the next request, the new one works', async () => {
      const app = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['applications.read']);
      expect((await get(base, app.auth)).status).toBe(200);
      const res = await post(`${base}/${app.id}/secret`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ _id: app.id, secret: expect.any(String), sys: { modified_by: suite.tenant.admin.userId } });
      expect(res.body.secret).not.toBe(app.secret);
      expectErrorBody(await get(base, app.auth), 401, 'InvalidToken');
      expect((await get(base, `Basic ${app.id}:${res.body.secret}`)).status).toBe(200);

      const events = await eventsOf('ApplicationUpdated', app.id);
      expect(events).toHaveLength(1);
      const text = JSON.stringify(events);
      expect(text).not.toContain(res.body.secret);
      expect(text).not.toContain(app.secret);
      expect(text).not.toMatch(/secret/);
    });

    it('lets an application rotate its own secret when it holds applications.update on itself', async () => {
      const app = await createApplication(suite.t, suite.tenant.admin, { permissions: [] });
      const role = await createRole(suite.t, suite.tenant.admin, { permissions: [`applications.update.${app.id}`] });
      expect((await put(`${base}/${app.id}`, { name: app.application.name, role: role.slug })).status).toBe(200);
      const res = await post(`${base}/${app.id}/secret`, undefined, app.auth);
      expect(res.status).toBe(200);
      expectErrorBody(await post(`${base}/${app.id}/secret`, undefined, app.auth), 401, 'InvalidToken');
      expect((await post(`${base}/${app.id}/secret`, undefined, `Basic ${app.id}:${res.body.secret}`)).status).toBe(200);
    });

    it('answers 404 when rotating an unknown or foreign application', async () => {
      expectErrorBody(await post(`${base}/00000000-0000-4000-8000-000000000000/secret`), 404, 'ApplicationNotFound');
      const foreign = await createApplication(suite.t, suite.other.admin);
      expectErrorBody(await post(`${base}/${foreign.id}/secret`), 404, 'ApplicationNotFound');
      expect((await get(`/memberships/${suite.other.membershipId}/applications/${foreign.id}`, foreign.auth)).status).toBe(403);
    });
  });

  describe('delete', () => {
    it('deletes an application: its Basic token stops at once; ApplicationDeleted has the prior without secrets', async () => {
      const app = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['applications.read']);
      expect((await get(base, app.auth)).status).toBe(200);
      expect((await del(`${base}/${app.id}`)).status).toBe(204);
      expectErrorBody(await get(base, app.auth), 401, 'InvalidToken');
      expectErrorBody(await get(`${base}/${app.id}`), 404, 'ApplicationNotFound');
      expectErrorBody(await del(`${base}/${app.id}`), 404, 'ApplicationNotFound');
      const events = await eventsOf('ApplicationDeleted', app.id);
      expect(events).toHaveLength(1);
      const { secret: _secret, ...prior } = app.application;
      expect(events[0]).toMatchObject({ document: {}, prior });
      expect(JSON.stringify(events)).not.toMatch(/secret/);
    });

    it('bulk-deletes own ids; foreign and unknown ids are not found and untouched', async () => {
      const own = [await createApplication(suite.t, suite.tenant.admin), await createApplication(suite.t, suite.tenant.admin)];
      const foreign = await createApplication(suite.t, suite.other.admin);
      const unknown = 'unknown-id';
      const res = await del(base, { ids: [unknown, own[1].id, foreign.id, own[0].id] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ deleted: [own[1].id, own[0].id], not_found: [unknown, foreign.id] });
      expect((await get(`/memberships/${suite.other.membershipId}/applications/${foreign.id}`, suite.other.admin.auth)).status).toBe(200);
      for (const app of own) {
        expectErrorBody(await get(`${base}/${app.id}`), 404, 'ApplicationNotFound');
        expect(await eventsOf('ApplicationDeleted', app.id)).toHaveLength(1);
      }
    });

    it('needs applications.delete, per id in a bulk delete', async () => {
      const kept = await createApplication(suite.t, suite.tenant.admin);
      const reader = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['applications.read']);
      expectErrorBody(await del(`${base}/${kept.id}`, undefined, reader.auth), 403, 'AccessDenied');
      expectErrorBody(await del(base, { ids: [kept.id] }, reader.auth), 403, 'AccessDenied');
      const deleter = await createApplicationWithPermissions(suite.t, suite.tenant.admin, ['applications.delete'], [`applications.delete.${kept.id}`]);
      expectErrorBody(await del(base, { ids: [kept.id] }, deleter.auth), 403, 'AccessDenied');
      expectErrorBody(await del(`${base}/${kept.id}`, undefined, deleter.auth), 403, 'AccessDenied');
      expect((await get(`${base}/${kept.id}`)).status).toBe(200);
    });

    it.each([
      ['no ids', {}],
      ['empty ids', { ids: [] }],
      ['ids of objects', { ids: [{}] }],
      ['1001 ids', { ids: Array.from({ length: 1001 }, (_, i) => `id-${i}`) }],
    ])('rejects a bulk delete with %s (400 ModelValidationError)', async (_name, body) => {
      expectErrorBody(await del(base, body), 400, 'ModelValidationError');
    });
  });
});
