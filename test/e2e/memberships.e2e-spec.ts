import { eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../../src/database/database';
import { roles } from '../../src/database/schema';
import { as, createApplicationWithPermissions, createMembership, expectErrorBody, hostileQueries, signIn, unique, useInstallation } from '../support/api';

/** Stands for the per-run slug prefix inside it.each tables (built before the prefix exists). */
const TAG_PLACEHOLDER = '__TAG__';

describe('memberships API', () => {
  const suite = useInstallation();
  const systemId = (): string => suite.inst.membership._id as string;


  describe('create', () => {
    it('creates a membership with its admin role, first admin user and application (setup shape)', async () => {
      const username = unique('first');
      const res = await as(suite.t, suite.inst.admin.auth).post('/memberships', {
        membership: { name: unique('Acme'), expires_in: 600, refresh_token_expires_in: 1200, scoped_token_expires_in: 300, user_activation: 'passive' },
        user: { username, email_address: `${username}@Example.com`, password: 'long enough pass', firstname: 'Fi' },
        application: { name: 'Acme Backend' },
      });
      expect(res.status).toBe(201);
      const { membership, user, role, application } = res.body;
      expect(membership).toEqual({
        _id: expect.any(String),
        name: expect.stringMatching(/^Acme-/),
        slug: expect.stringMatching(/^acme-[0-9a-f]{8}$/),
        secret_key: expect.any(String),
        expires_in: 600,
        refresh_token_expires_in: 1200,
        scoped_token_expires_in: 300,
        hash_algorithm: 'ARGON2ID',
        user_activation: 'passive',
        mfa_policy: 'optional',
        mail_providers: [],
        otp_settings: { enabled: false, length: 6, contains_letters: false, contains_digits: true, expires_in: 600 },
        sign_in_policy: { max_failures: 10, window_seconds: 900, lock_seconds: 60 },
        code_policy: null,
        is_system: false,
        sys: { created_at: expect.any(String), created_by: suite.inst.admin.userId },
      });
      expect(membership.secret_key.length).toBeGreaterThanOrEqual(43);
      expect(role).toMatchObject({ slug: 'admin', membership_id: membership._id });
      expect(role.permissions).toEqual(expect.arrayContaining([`memberships.read.${membership._id}`, `memberships.update.${membership._id}`, 'users.*', 'roles.*']));
      expect(role.permissions).not.toContain('memberships.*');
      // The first admin is active even in a passive membership.
      expect(user).toMatchObject({ username, email_address: `${username}@example.com`, role: 'admin', is_active: true, membership_id: membership._id });
      expect(JSON.stringify(user)).not.toMatch(/password/i);
      expect(application).toMatchObject({ name: 'Acme Backend', slug: 'acme-backend', role: 'admin', secret: expect.any(String) });
      expect(application).not.toHaveProperty('secret_digest');

      // The new admin signs in; the new application authenticates; both see their own membership.
      const admin = await signIn(suite.t, membership._id, username, 'long enough pass');
      const own = await as(suite.t, admin.auth).get(`/memberships/${membership._id}`);
      expect(own.status).toBe(200);
      expect(own.body.secret_key).toBe(membership.secret_key);
      const byApp = await as(suite.t, `Basic ${application._id}:${application.secret}`).get(`/memberships/${membership._id}`);
      expect(byApp.status).toBe(200);

      // Its events are in its own log, by the system admin.
      const events = await as(suite.t, admin.auth).post(`/memberships/${membership._id}/events/_query`, {
        where: { event_type: { $in: ['RoleCreated', 'UserCreated', 'ApplicationCreated'] } },
      });
      expect(events.status).toBe(200);
      const types = (events.body.items as { event_type: string; utilizer_id: string }[]).map((e) => e.event_type).sort();
      expect(types).toEqual(['ApplicationCreated', 'RoleCreated', 'UserCreated']);
      expect((events.body.items as { utilizer_id: string }[]).every((e) => e.utilizer_id === suite.inst.admin.userId)).toBe(true);
      expect(JSON.stringify(events.body)).not.toContain(application.secret);
    });

    it('creates a membership without a first user (no `user` in the answer)', async () => {
      const res = await as(suite.t, suite.inst.admin.auth).post('/memberships', { membership: { name: unique('Empty') }, application: { name: 'only-app' } });
      expect(res.status).toBe(201);
      expect(res.body).not.toHaveProperty('user');
      expect(res.body.membership).toMatchObject({ expires_in: 3600, refresh_token_expires_in: 86400, scoped_token_expires_in: null, user_activation: 'active' });
      expect(res.body.role.slug).toBe('admin');
      expect(res.body.application.secret).toEqual(expect.any(String));
    });

    it('accepts an application caller of the system membership holding memberships.create', async () => {
      const res = await as(suite.t, suite.inst.application.basic).post('/memberships', { membership: { name: unique('ByApp') } });
      expect(res.status).toBe(201);
      expect(res.body.membership.sys.created_by).toBe(suite.inst.application.id);
    });

    it.each([
      ['no membership', { user: undefined }, ['membership']],
      ['name missing', { membership: {} }, ['membership.name']],
      ['name not a string', { membership: { name: 5 } }, ['membership.name']],
      ['name too long', { membership: { name: 'x'.repeat(129) } }, ['membership.name']],
      ['bad slug', { membership: { name: 'ok', slug: 'Not A Slug' } }, ['membership.slug']],
      ['expires_in zero', { membership: { name: 'ok', expires_in: 0 } }, ['membership.expires_in']],
      ['expires_in not an integer', { membership: { name: 'ok', expires_in: 1.5 } }, ['membership.expires_in']],
      ['refresh lifetime too long', { membership: { name: 'ok', refresh_token_expires_in: 40_000_000 } }, ['membership.refresh_token_expires_in']],
      ['scoped lifetime a string', { membership: { name: 'ok', scoped_token_expires_in: '60' } }, ['membership.scoped_token_expires_in']],
      ['unknown user_activation', { membership: { name: 'ok', user_activation: 'maybe' } }, ['membership.user_activation']],
      ['unknown hash_algorithm', { membership: { name: 'ok', hash_algorithm: 'MD5' } }, ['membership.hash_algorithm']],
      ['unknown field', { membership: { name: 'ok', secret_key: 'mine' } }, ['membership.secret_key']],
      ['unknown top-level field', { membership: { name: 'ok' }, extra: 1 }, ['extra']],
      ['bad user', { membership: { name: 'ok' }, user: { username: 'a b', email_address: 'nope', password: 'short' } }, ['user.username', 'user.email_address', 'user.password']],
      ['user password too long', { membership: { name: 'ok' }, user: { username: 'ab', email_address: 'a@b.co', password: 'x'.repeat(257) } }, ['user.password']],
      ['application without name', { membership: { name: 'ok' }, application: {} }, ['application.name']],
    ])('validates the body: %s', async (_name, body, fields) => {
      const res = await as(suite.t, suite.inst.admin.auth).post('/memberships', body);
      expectErrorBody(res, 400, 'ModelValidationError');
      expect((res.body.errors as { field: string }[]).map((e) => e.field)).toEqual(expect.arrayContaining(fields));
    });

    it('answers 409 MembershipAlreadyExists for a taken slug', async () => {
      const slug = unique('taken').toLowerCase();
      expect((await as(suite.t, suite.inst.admin.auth).post('/memberships', { membership: { name: 'One', slug } })).status).toBe(201);
      const again = await as(suite.t, suite.inst.admin.auth).post('/memberships', { membership: { name: 'Two', slug } });
      expectErrorBody(again, 409, 'MembershipAlreadyExists');
    });

    it('answers 401 without a token', async () => {
      const res = await suite.t.http().post('/memberships').send({ membership: { name: 'x' } });
      expectErrorBody(res, 401, 'InvalidToken');
    });
  });

  describe('tenancy', () => {
    it('a non-system admin reads and updates only its own membership', async () => {
      const a = await createMembership(suite.t, suite.inst.admin);
      const b = await createMembership(suite.t, suite.inst.admin);

      const own = await as(suite.t, a.admin.auth).get(`/memberships/${a.membershipId}`);
      expect(own.status).toBe(200);
      expect(own.body).toMatchObject({ _id: a.membershipId, secret_key: a.membership.secret_key, is_system: false });

      expectErrorBody(await as(suite.t, a.admin.auth).get('/memberships'), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, a.admin.auth).post('/memberships/_query', { where: {} }), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, a.admin.auth).post('/memberships', { membership: { name: unique('Nope') } }), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, a.admin.auth).get(`/memberships/${b.membershipId}`), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, a.admin.auth).get(`/memberships/${systemId()}`), 403, 'AccessDenied');
      // An unknown id is not revealed as unknown to a tenant.
      expectErrorBody(await as(suite.t, a.admin.auth).get('/memberships/00000000-0000-4000-8000-000000000000'), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, a.admin.auth).put(`/memberships/${b.membershipId}`, { name: 'Hijacked' }), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, a.admin.auth).post(`/memberships/${b.membershipId}/secret-key`), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, a.admin.auth).del(`/memberships/${b.membershipId}`), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, a.admin.auth).del(`/memberships/${a.membershipId}`), 403, 'AccessDenied');

      const updated = await as(suite.t, a.admin.auth).put(`/memberships/${a.membershipId}`, { name: a.membership.name, expires_in: 900 });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ expires_in: 900, slug: a.membership.slug, sys: { modified_by: a.admin.userId } });
      // b is untouched.
      const bNow = await as(suite.t, suite.inst.admin.auth).get(`/memberships/${b.membershipId}`);
      expect(bNow.body.name).toBe(b.membership.name);
    });

    it('a tenant role granting memberships.* still cannot list, create or read other memberships', async () => {
      const a = await createMembership(suite.t, suite.inst.admin);
      // A tenant admin cannot grant memberships.* (Grants); a role that holds it anyway, written
      // straight into the database, still does not reach beyond the tenant.
      expectErrorBody(await as(suite.t, a.admin.auth).post(`/memberships/${a.membershipId}/roles`, { name: unique('Wide'), permissions: ['memberships.*'] }), 403, 'AccessDenied');
      const wide = await createApplicationWithPermissions(suite.t, a.admin, []);
      const { db } = suite.t.app.get<Database>(DATABASE);
      await db.update(roles).set({ permissions: ['memberships.*'] }).where(eq(roles.id, wide.role._id as string));
      expectErrorBody(await as(suite.t, wide.auth).get('/memberships'), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, wide.auth).post('/memberships', { membership: { name: unique('Nope') } }), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, wide.auth).get(`/memberships/${systemId()}`), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, wide.auth).put(`/memberships/${systemId()}`, { name: 'Mine now' }), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, wide.auth).del(`/memberships/${systemId()}`), 403, 'AccessDenied');
      expect((await as(suite.t, wide.auth).get(`/memberships/${a.membershipId}`)).status).toBe(200);
    });

    it('a system admin reads any membership with its secret key; unknown ids are 404', async () => {
      const a = await createMembership(suite.t, suite.inst.admin);
      const res = await as(suite.t, suite.inst.admin.auth).get(`/memberships/${a.membershipId}`);
      expect(res.status).toBe(200);
      expect(res.body.secret_key).toBe(a.membership.secret_key);
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).get('/memberships/00000000-0000-4000-8000-000000000000'), 404, 'MembershipNotFound');
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).put('/memberships/00000000-0000-4000-8000-000000000000', { name: 'x' }), 404, 'MembershipNotFound');
    });

    it('discloses secret_key only to holders of memberships.read on that membership', async () => {
      const a = await createMembership(suite.t, suite.inst.admin);
      // Update without read: the answer has no secret key, and a GET is refused.
      const updater = await createApplicationWithPermissions(suite.t, a.admin, [`memberships.update.${a.membershipId}`]);
      const updated = await as(suite.t, updater.auth).put(`/memberships/${a.membershipId}`, { name: a.membership.name, expires_in: 1234 });
      expect(updated.status).toBe(200);
      expect(updated.body.expires_in).toBe(1234);
      expect(updated.body).not.toHaveProperty('secret_key');
      expectErrorBody(await as(suite.t, updater.auth).get(`/memberships/${a.membershipId}`), 403, 'AccessDenied');

      // A system caller that may read all memberships except one: the list leaves that one out
      // (contract "Bounded work and per-object rules"), so neither it nor its key is shown.
      const b = await createMembership(suite.t, suite.inst.admin);
      const systemCaller = { auth: suite.inst.admin.auth, membershipId: systemId() };
      const reader = await createApplicationWithPermissions(suite.t, systemCaller, ['memberships.read'], [`memberships.read.${b.membershipId}`]);
      const list = await as(suite.t, reader.auth).post('/memberships/_query', { where: { _id: { $in: [a.membershipId, b.membershipId] } } });
      expect(list.status).toBe(200);
      const byId = Object.fromEntries((list.body.items as { _id: string }[]).map((m) => [m._id, m]));
      expect(byId[a.membershipId]).toHaveProperty('secret_key', a.membership.secret_key);
      expect(byId[b.membershipId]).toBeUndefined();
      expectErrorBody(await as(suite.t, reader.auth).get(`/memberships/${b.membershipId}`), 403, 'AccessDenied');

      // A creator without memberships.read gets the membership without its key.
      const creator = await createApplicationWithPermissions(suite.t, systemCaller, ['memberships.create']);
      const created = await as(suite.t, creator.auth).post('/memberships', { membership: { name: unique('NoKey') } });
      expect(created.status).toBe(201);
      expect(created.body.membership).not.toHaveProperty('secret_key');
      expect(created.body.membership._id).toEqual(expect.any(String));
    });
  });

  describe('list and query', () => {
    const tag = unique('lq').toLowerCase();
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      // Three memberships with known settings; queries below are narrowed to them by slug prefix.
      const specs = [
        { key: 'a', expires_in: 1001, scoped_token_expires_in: 60, user_activation: 'active' },
        { key: 'b', expires_in: 1002, user_activation: 'passive' },
        { key: 'c', expires_in: 1003, scoped_token_expires_in: 90, user_activation: 'active' },
      ];
      for (const spec of specs) {
        const { key, ...settings } = spec;
        const res = await as(suite.t, suite.inst.admin.auth).post('/memberships', { membership: { name: `${tag} ${key}`, slug: `${tag}-${key}`, ...settings } });
        expect(res.status).toBe(201);
        ids[key] = res.body.membership._id;
      }
    });

    const slugsOf = (res: { body: { items: { slug: string }[] } }): string[] => res.body.items.map((m) => m.slug).sort();
    const mine = { slug: { $in: ['a', 'b', 'c'].map((k) => `${tag}-${k}`) } };
    const query = (where: object, params = '') => as(suite.t, suite.inst.admin.auth).post(`/memberships/_query${params}`, { where: { $and: [mine, where] } });

    it('lists with paging, with_count and sort', async () => {
      const all = await as(suite.t, suite.inst.admin.auth).get('/memberships?with_count=true&limit=1000');
      expect(all.status).toBe(200);
      expect(all.body.count).toBe(all.body.items.length);
      expect((all.body.items as { _id: string }[]).map((m) => m._id)).toEqual(expect.arrayContaining([systemId(), ids.a, ids.b, ids.c]));

      const page1 = await as(suite.t, suite.inst.admin.auth).get('/memberships?limit=2&with_count=true');
      expect(page1.body.items).toHaveLength(2);
      expect(page1.body.count).toBe(all.body.count);
      const page2 = await as(suite.t, suite.inst.admin.auth).get('/memberships?limit=2&skip=2');
      expect(page2.body).not.toHaveProperty('count');
      expect(page2.body.items[0]._id).toBe(all.body.items[2]._id);

      const sorted = await query({}, '?sort=slug%20desc');
      expect(sorted.body.items.map((m: { slug: string }) => m.slug)).toEqual([`${tag}-c`, `${tag}-b`, `${tag}-a`]);
      const counted = await query({ user_activation: 'active' }, '?with_count=true&limit=1');
      expect(counted.body.items).toHaveLength(1);
      expect(counted.body.count).toBe(2);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['skip=-1', 'skip'],
      ['with_count=maybe', 'with_count'],
      ['sort=expires_in', 'sort'],
      ['sort=secret_key', 'sort'],
      ['sort=name%20sideways', 'sort'],
    ])('rejects list parameter %s with 400 InvalidQuery', async (params, name) => {
      const res = await as(suite.t, suite.inst.admin.auth).get(`/memberships?${params}`);
      expectErrorBody(res, 400, 'InvalidQuery');
      expect(res.body.message).toContain(name);
    });

    it.each([
      ['implicit equality', { slug: `${TAG_PLACEHOLDER}-b` }, ['b']],
      ['$eq', { expires_in: { $eq: 1001 } }, ['a']],
      ['$ne', { expires_in: { $ne: 1001 } }, ['b', 'c']],
      ['$in', { expires_in: { $in: [1001, 1003, 7] } }, ['a', 'c']],
      ['$nin', { expires_in: { $nin: [1001, 1003] } }, ['b']],
      ['$gt', { expires_in: { $gt: 1001 } }, ['b', 'c']],
      ['$gte', { expires_in: { $gte: 1002 } }, ['b', 'c']],
      ['$lt', { expires_in: { $lt: 1002 } }, ['a']],
      ['$lte', { expires_in: { $lte: 1002 } }, ['a', 'b']],
      ['$exists true', { scoped_token_expires_in: { $exists: true } }, ['a', 'c']],
      ['$exists false', { scoped_token_expires_in: { $exists: false } }, ['b']],
      ['$and', { $and: [{ user_activation: 'active' }, { expires_in: { $gt: 1001 } }] }, ['c']],
      ['$or', { $or: [{ user_activation: 'passive' }, { expires_in: 1003 }] }, ['b', 'c']],
      ['timestamp', { 'sys.created_at': { $gte: '2000-01-01T00:00:00Z' }, is_system: false }, ['a', 'b', 'c']],
    ])('_query %s', async (_name, where, expected) => {
      const resolved = JSON.parse(JSON.stringify(where).replaceAll(TAG_PLACEHOLDER, tag)) as object;
      const res = await query(resolved);
      expect(res.status).toBe(200);
      expect(slugsOf(res)).toEqual(expected.map((k) => `${tag}-${k}`));
    });

    it('_query projects with select', async () => {
      const res = await as(suite.t, suite.inst.admin.auth).post('/memberships/_query', { where: { _id: ids.a }, select: { name: 1, 'sys.created_at': 1 } });
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([{ _id: ids.a, name: `${tag} a`, sys: { created_at: expect.any(String) } }]);
    });

    it.each(hostileQueries('name', 'secret_key'))('refuses a hostile _query ($name) with 400 InvalidQuery', async ({ body }) => {
      const res = await as(suite.t, suite.inst.admin.auth).post('/memberships/_query', body);
      expectErrorBody(res, 400, 'InvalidQuery');
    });

    it('treats SQL inside a value as a plain value', async () => {
      const res = await as(suite.t, suite.inst.admin.auth).post('/memberships/_query', { where: { name: "x' or '1'='1'; drop table memberships; --" } });
      expect(res.status).toBe(200);
      expect(res.body.items).toEqual([]);
      expect((await as(suite.t, suite.inst.admin.auth).get(`/memberships/${ids.a}`)).status).toBe(200);
    });

    it.each(['mail_providers', 'otp_settings'])('does not let %s be queried', async (field) => {
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).post('/memberships/_query', { where: { [field]: { $exists: true } } }), 400, 'InvalidQuery');
    });
  });

  describe('update', () => {
    it('replaces the settings, answers 409 for an identical update and validates', async () => {
      const a = await createMembership(suite.t, suite.inst.admin, { expires_in: 500, scoped_token_expires_in: 100 });
      const path = `/memberships/${a.membershipId}`;
      const body = { name: a.membership.name, expires_in: 700, refresh_token_expires_in: 7000, user_activation: 'passive', hash_algorithm: 'ARGON2ID' };
      const res = await as(suite.t, a.admin.auth).put(path, body);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        _id: a.membershipId,
        slug: a.membership.slug,
        expires_in: 700,
        refresh_token_expires_in: 7000,
        // Omitted: back to its default (unset).
        scoped_token_expires_in: null,
        user_activation: 'passive',
        secret_key: a.membership.secret_key,
        sys: { created_at: a.membership.sys.created_at, modified_at: expect.any(String), modified_by: a.admin.userId },
      });
      expectErrorBody(await as(suite.t, a.admin.auth).put(path, body), 409, 'IdenticalDocumentError');
      expectErrorBody(await as(suite.t, a.admin.auth).put(path, { ...body, slug: a.membership.slug }), 409, 'IdenticalDocumentError');

      // The new lifetimes apply to the next sign-in.
      const again = await suite.t.http().post('/generate-token').set('X-Service-Alias', a.membershipId).send({ username: a.admin.username, password: a.admin.password });
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({ expires_in: 700, refresh_token_expires_in: 7000 });
    });

    it.each([
      ['name missing', { expires_in: 10 }, 'name'],
      ['name empty', { name: '' }, 'name'],
      ['bad slug', { name: 'x', slug: '-bad-' }, 'slug'],
      ['negative lifetime', { name: 'x', expires_in: -5 }, 'expires_in'],
      ['user_activation', { name: 'x', user_activation: 'ACTIVE' }, 'user_activation'],
      ['hash_algorithm', { name: 'x', hash_algorithm: 'BCRYPT' }, 'hash_algorithm'],
      ['server-managed field', { name: 'x', is_system: true }, 'is_system'],
      ['secret key', { name: 'x', secret_key: 'mine' }, 'secret_key'],
    ])('rejects an invalid update (%s) with 400 ModelValidationError', async (_name, body, field) => {
      const a = await createMembership(suite.t, suite.inst.admin);
      const res = await as(suite.t, a.admin.auth).put(`/memberships/${a.membershipId}`, body);
      expectErrorBody(res, 400, 'ModelValidationError');
      expect((res.body.errors as { field: string }[]).map((e) => e.field)).toContain(field);
    });

    it('a new name or slug changes the token issuer/audience, so earlier tokens stop verifying', async () => {
      const a = await createMembership(suite.t, suite.inst.admin);
      const newSlug = unique('renamed').toLowerCase();
      const res = await as(suite.t, a.admin.auth).put(`/memberships/${a.membershipId}`, { name: 'Renamed', slug: newSlug });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ name: 'Renamed', slug: newSlug });
      expectErrorBody(await as(suite.t, a.admin.auth).get(`/memberships/${a.membershipId}`), 401, 'InvalidToken');
      const fresh = await signIn(suite.t, a.membershipId, a.admin.username, a.admin.password);
      expect((await as(suite.t, fresh.auth).get(`/memberships/${a.membershipId}`)).body.name).toBe('Renamed');
    });

    it('answers 409 MembershipAlreadyExists when the new slug is taken', async () => {
      const a = await createMembership(suite.t, suite.inst.admin);
      const b = await createMembership(suite.t, suite.inst.admin);
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).put(`/memberships/${a.membershipId}`, { name: 'x', slug: b.membership.slug }), 409, 'MembershipAlreadyExists');
    });
  });

  describe('secret key rotation', () => {
    it('issues a new key; earlier tokens answer InvalidToken, applications keep working', async () => {
      const a = await createMembership(suite.t, suite.inst.admin, { application: true });
      const res = await as(suite.t, a.admin.auth).post(`/memberships/${a.membershipId}/secret-key`);
      expect(res.status).toBe(200);
      expect(res.body.secret_key).toEqual(expect.any(String));
      expect(res.body.secret_key).not.toBe(a.membership.secret_key);
      expectErrorBody(await as(suite.t, a.admin.auth).get(`/memberships/${a.membershipId}`), 401, 'InvalidToken');
      const refreshed = await suite.t.http().post('/refresh-token').send({ token: a.admin.refreshToken });
      expect(refreshed.status).toBe(401);
      const fresh = await signIn(suite.t, a.membershipId, a.admin.username, a.admin.password);
      expect((await as(suite.t, fresh.auth).get(`/memberships/${a.membershipId}`)).body.secret_key).toBe(res.body.secret_key);
      expect((await as(suite.t, a.application!.basic).get(`/memberships/${a.membershipId}`)).status).toBe(200);
    });

    it("records MembershipUpdated (with prior) and MembershipSecretKeyRotated in the membership's own log, never with the key; a refused change records none", async () => {
      const a = await createMembership(suite.t, suite.inst.admin, { application: true });
      const updated = await as(suite.t, suite.inst.admin.auth).put(`/memberships/${a.membershipId}`, { name: a.membership.name, expires_in: 900 });
      expect(updated.status).toBe(200);
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).put(`/memberships/${a.membershipId}`, { name: a.membership.name, expires_in: 900 }), 409, 'IdenticalDocumentError');
      const rotated = await as(suite.t, suite.inst.admin.auth).post(`/memberships/${a.membershipId}/secret-key`);
      expect(rotated.status).toBe(200);

      // Read as the tenant sees its log (its application: the admin's token ended with the key).
      const log = await as(suite.t, a.application!.basic).post(`/memberships/${a.membershipId}/events/_query?sort=event_time%20asc`, {
        where: { event_type: { $in: ['MembershipUpdated', 'MembershipSecretKeyRotated'] } },
      });
      expect(log.status).toBe(200);
      expect(log.body.items.map((event: { event_type: string }) => event.event_type)).toEqual(['MembershipUpdated', 'MembershipSecretKeyRotated']);
      const [update, rotation] = log.body.items as Record<string, Record<string, unknown>>[];
      expect(update).toMatchObject({
        utilizer_id: suite.inst.admin.userId,
        membership_id: a.membershipId,
        document: { _id: a.membershipId, name: a.membership.name, slug: a.membership.slug, expires_in: 900 },
        prior: { _id: a.membershipId, expires_in: a.membership.expires_in },
      });
      expect(rotation).toMatchObject({ utilizer_id: suite.inst.admin.userId, document: { _id: a.membershipId }, prior: null });
      const text = JSON.stringify(log.body);
      expect(text).not.toContain('secret_key');
      for (const key of [a.membership.secret_key as string, rotated.body.secret_key as string]) expect(text).not.toContain(key);
    });

    it('is refused for another membership and 404 for an unknown one (system caller)', async () => {
      const a = await createMembership(suite.t, suite.inst.admin);
      const b = await createMembership(suite.t, suite.inst.admin);
      expectErrorBody(await as(suite.t, a.admin.auth).post(`/memberships/${b.membershipId}/secret-key`), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).post('/memberships/00000000-0000-4000-8000-000000000000/secret-key'), 404, 'MembershipNotFound');
    });
  });

  describe('delete', () => {
    it('refuses a membership that holds users (409 MembershipNotEmpty) and the system membership (409)', async () => {
      const a = await createMembership(suite.t, suite.inst.admin);
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).del(`/memberships/${a.membershipId}`), 409, 'MembershipNotEmpty');
      expect((await as(suite.t, a.admin.auth).get(`/memberships/${a.membershipId}`)).status).toBe(200);
      const system = await as(suite.t, suite.inst.admin.auth).del(`/memberships/${systemId()}`);
      expectErrorBody(system, 409, 'SystemMembershipCannotBeDeleted');
      expect(system.body.message).toMatch(/system membership/);
    });

    it('deletes an empty membership with everything in it, at once visible to the access guard', async () => {
      const created = await as(suite.t, suite.inst.admin.auth).post('/memberships', { membership: { name: unique('Doomed') }, application: { name: 'doomed-app' } });
      expect(created.status).toBe(201);
      const id = created.body.membership._id as string;
      const basic = `Basic ${created.body.application._id}:${created.body.application.secret}`;
      expect((await as(suite.t, basic).get(`/memberships/${id}/roles`)).status).toBe(200);
      // A foreign caller learns the membership exists (and this instance caches it).
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).get(`/memberships/${id}/roles`), 403, 'AccessDenied');

      expect((await as(suite.t, suite.inst.admin.auth).del(`/memberships/${id}`)).status).toBe(204);
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).get(`/memberships/${id}`), 404, 'MembershipNotFound');
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).get(`/memberships/${id}/roles`), 404, 'MembershipNotFound');
      expectErrorBody(await as(suite.t, basic).get(`/memberships/${id}/roles`), 401, 'InvalidToken');
      expectErrorBody(await as(suite.t, suite.inst.admin.auth).del(`/memberships/${id}`), 404, 'MembershipNotFound');
    });

    it('is refused to system callers without memberships.delete', async () => {
      const created = await as(suite.t, suite.inst.admin.auth).post('/memberships', { membership: { name: unique('Kept') } });
      const systemCaller = { auth: suite.inst.admin.auth, membershipId: systemId() };
      const reader = await createApplicationWithPermissions(suite.t, systemCaller, ['memberships.read']);
      expectErrorBody(await as(suite.t, reader.auth).del(`/memberships/${created.body.membership._id}`), 403, 'AccessDenied');
    });
  });
});
