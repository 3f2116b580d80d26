import type { TestApp } from '../support/app';
import {
  as,
  bootTenants,
  createApplicationWithPermissions,
  type CreatedMembership,
  expectErrorBody,
  hostileQueries,
  type Installation,
  type SignedIn,
  unique,
} from '../support/api';

describe('active and revoked token listings', () => {
  let t: TestApp;
  let inst: Installation;
  let tenant: CreatedMembership;
  let other: CreatedMembership;
  let active: string;
  let revoked: string;

  beforeAll(async () => {
    ({ t, inst, tenant, other } = await bootTenants());
    active = `/memberships/${tenant.membershipId}/active-tokens`;
    revoked = `/memberships/${tenant.membershipId}/revoked-tokens`;
  });
  afterAll(() => t.close());

  const { get, post, del } = as(() => t, () => tenant.admin);

  /** Signs the tenant admin in again (a new session) with the given client metadata. */
  async function newSession(ip: string, agent: string, who: SignedIn = tenant.admin): Promise<{ accessToken: string; refreshToken: string; sessionId: string }> {
    const res = await t
      .http()
      .post('/generate-token')
      .set('X-Service-Alias', who.membershipId)
      .set('X-IpAddress', ip)
      .set('X-UserAgent', agent)
      .send({ username: who.username, password: who.password });
    expect(res.status).toBe(201);
    const sessionId = JSON.parse(Buffer.from((res.body.access_token as string).split('.')[1], 'base64url').toString('utf8')).sid as string;
    return { accessToken: res.body.access_token, refreshToken: res.body.refresh_token, sessionId };
  }

  it('lists live sessions with metadata only, newest first, and gets one', async () => {
    const ip = `10.0.0.${Math.floor(Math.random() * 250)}`;
    const session = await newSession(ip, 'ListingTest/1.0');
    const res = await get(`${active}?with_count=true`);
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(res.body.items.length);
    // Newest first (created_at has the second granularity of the token's iat).
    const times = (res.body.items as { created_at: string }[]).map((s) => Date.parse(s.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const listed = (res.body.items as { _id: string }[]).find((s) => s._id === session.sessionId);
    expect(listed).toEqual({
      _id: session.sessionId,
      user_id: tenant.admin.userId,
      username: tenant.admin.username,
      kind: 'pair',
      parent_id: null,
      scopes: null,
      created_at: expect.any(String),
      expires_at: expect.any(String),
      access_expires_at: expect.any(String),
      refresh_expires_at: expect.any(String),
      ip_address: ip,
      user_agent: 'ListingTest/1.0',
      membership_id: tenant.membershipId,
    });
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(session.accessToken);
    expect(text).not.toContain(session.refreshToken);
    expect(text).not.toMatch(/jti|token"/);

    const one = await get(`${active}/${session.sessionId}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(listed);
    expectErrorBody(await get(`${active}/00000000-0000-4000-8000-000000000000`), 404, 'TokenNotFound');
  });

  it('shows scoped tokens with their scopes and parent session', async () => {
    const parent = await newSession('10.1.1.1', 'Scoper');
    const scoped = await t.http().post('/generate-token').set('Authorization', `Bearer ${parent.accessToken}`).send({ scopes: ['roles.read'] });
    expect(scoped.status).toBe(201);
    const res = await post(`${active}/_query`, { where: { kind: 'scoped', parent_id: parent.sessionId } });
    expect(res.status).toBe(200);
    expect(res.body.items).toEqual([
      expect.objectContaining({ kind: 'scoped', scopes: ['roles.read'], parent_id: parent.sessionId, refresh_expires_at: null, username: tenant.admin.username }),
    ]);
  });

  it('pages, counts and sorts', async () => {
    const agent = unique('pager');
    const sessions = [await newSession('10.2.0.1', agent), await newSession('10.2.0.2', agent), await newSession('10.2.0.3', agent)];
    const where = { user_agent: agent };
    const all = await post(`${active}/_query?with_count=true`, { where });
    expect(all.body.count).toBe(3);
    const allIds = (all.body.items as { _id: string }[]).map((s) => s._id);
    expect([...allIds].sort()).toEqual(sessions.map((s) => s.sessionId).sort());
    const page = await post(`${active}/_query?limit=1&skip=1&with_count=true`, { where });
    expect(page.body).toEqual({ items: [expect.objectContaining({ _id: allIds[1] })], count: 3 });
    const pages = [0, 1, 2].map((skip) => post(`${active}/_query?limit=1&skip=${skip}`, { where }));
    expect((await Promise.all(pages)).map((p) => p.body.items[0]._id)).toEqual(allIds);
    const ascending = await post(`${active}/_query?sort=created_at%20asc`, { where });
    const times = (ascending.body.items as { created_at: string }[]).map((s) => Date.parse(s.created_at));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const byId = await post(`${active}/_query?sort=_id%20desc`, { where });
    expect(byId.body.items.map((s: { _id: string }) => s._id)).toEqual([...allIds].sort().reverse());
    const noCount = await get(`${active}?limit=1`);
    expect(noCount.body).not.toHaveProperty('count');
    expect(noCount.body.items).toHaveLength(1);
    expectErrorBody(await get(`${active}?sort=ip_address`), 400, 'InvalidQuery');
    expectErrorBody(await get(`${active}?limit=5000`), 400, 'InvalidQuery');
  });

  describe('_query operators', () => {
    const agent = unique('ops');
    const ips = ['10.3.0.1', '10.3.0.2', '10.3.0.3'];
    let ids: string[] = [];
    let firstCreatedAt = '';

    beforeAll(async () => {
      ids = [];
      for (const ip of ips) ids.push((await newSession(ip, agent)).sessionId);
      firstCreatedAt = (await get(`${active}/${ids[0]}`)).body.created_at;
    });

    it.each([
      ['implicit equality', () => ({ ip_address: ips[0] }), [0]],
      ['$eq', () => ({ ip_address: { $eq: ips[1] } }), [1]],
      ['$ne', () => ({ ip_address: { $ne: ips[1] } }), [0, 2]],
      ['$in', () => ({ _id: { $in: [ids[0], ids[2], 'nope'] } }), [0, 2]],
      ['$nin', () => ({ _id: { $nin: [ids[0], ids[2]] } }), [1]],
      ['$gt', () => ({ ip_address: { $gt: ips[1] } }), [2]],
      ['$gte', () => ({ ip_address: { $gte: ips[1] } }), [1, 2]],
      ['timestamp $gte', () => ({ created_at: { $gte: firstCreatedAt } }), [0, 1, 2]],
      ['timestamp $lt', () => ({ created_at: { $lt: firstCreatedAt } }), []],
      ['$lt', () => ({ ip_address: { $lt: ips[1] } }), [0]],
      ['$lte', () => ({ ip_address: { $lte: ips[1] } }), [0, 1]],
      ['$exists', () => ({ revoked_at: { $exists: false }, refresh_expires_at: { $exists: true } }), [0, 1, 2]],
      ['$and', () => ({ $and: [{ username: tenant.admin.username }, { ip_address: ips[2] }] }), [2]],
      ['$or', () => ({ $or: [{ ip_address: ips[0] }, { _id: ids[2] }] }), [0, 2]],
    ])('%s', async (_name, where, expected) => {
      const res = await post(`${active}/_query`, { where: { $and: [{ user_agent: agent }, where()] } });
      expect(res.status).toBe(200);
      expect((res.body.items as { _id: string }[]).map((s) => s._id).sort()).toEqual(expected.map((i) => ids[i]).sort());
    });

    it('projects with select', async () => {
      const res = await post(`${active}/_query`, { where: { _id: ids[0] }, select: { ip_address: 1, username: 1 } });
      expect(res.body.items).toEqual([{ _id: ids[0], ip_address: ips[0], username: tenant.admin.username }]);
    });

    it.each([
      ...hostileQueries('ip_address', 'access_jti'),
      { name: 'filter on refresh_jti', body: { where: { refresh_jti: 'x' } } },
      { name: 'filter on a token', body: { where: { token: 'x' } } },
      { name: 'select of a token', body: { select: { access_token: 1 } } },
    ])('refuses a hostile _query ($name) with 400 InvalidQuery', async ({ body }) => {
      expectErrorBody(await post(`${active}/_query`, body), 400, 'InvalidQuery');
      expectErrorBody(await post(`${revoked}/_query`, body), 400, 'InvalidQuery');
    });
  });

  it('revokes one session: its tokens (and scoped children) stop at once; it moves to the revoked listing', async () => {
    const victim = await newSession('10.4.0.1', 'Victim');
    const child = await t.http().post('/generate-token').set('Authorization', `Bearer ${victim.accessToken}`).send({ scopes: ['roles.read'] });
    expect(child.status).toBe(201);
    const bystander = await newSession('10.4.0.2', 'Bystander');

    expect((await del(`${active}/${victim.sessionId}`)).status).toBe(204);
    expectErrorBody(await get(`/memberships/${tenant.membershipId}/roles`, `Bearer ${victim.accessToken}`), 401, 'TokenWasRevoked');
    expectErrorBody(await get(`/memberships/${tenant.membershipId}/roles`, `Bearer ${child.body.access_token}`), 401, 'TokenWasRevoked');
    const refresh = await t.http().post('/refresh-token').send({ token: victim.refreshToken });
    expectErrorBody(refresh, 401, 'RefreshTokenWasRevoked');
    expect((await get(`/memberships/${tenant.membershipId}/roles`, `Bearer ${bystander.accessToken}`)).status).toBe(200);

    expectErrorBody(await get(`${active}/${victim.sessionId}`), 404, 'TokenNotFound');
    expectErrorBody(await del(`${active}/${victim.sessionId}`), 404, 'TokenNotFound');
    const gone = await post(`${active}/_query`, { where: { user_agent: 'Victim' } });
    expect(gone.body.items).toEqual([]);

    const listed = await post(`${revoked}/_query?with_count=true`, { where: { $or: [{ _id: victim.sessionId }, { parent_id: victim.sessionId }] } });
    expect(listed.status).toBe(200);
    expect(listed.body.count).toBe(2);
    const parentRow = (listed.body.items as { _id: string }[]).find((s) => s._id === victim.sessionId);
    expect(parentRow).toMatchObject({
      user_id: tenant.admin.userId,
      username: tenant.admin.username,
      ip_address: '10.4.0.1',
      revoked_at: expect.any(String),
      revoked_by: tenant.admin.userId,
      revoke_reason: 'revoked-by-administrator',
    });
    const all = await get(`${revoked}?with_count=true`);
    expect(all.status).toBe(200);
    expect((all.body.items as { _id: string }[]).map((s) => s._id)).toEqual(expect.arrayContaining([victim.sessionId]));
    expect(JSON.stringify(all.body)).not.toContain(victim.accessToken);

    const events = await post(`/memberships/${tenant.membershipId}/events/_query`, { where: { event_type: 'TokenRevoked', utilizer_id: tenant.admin.userId } });
    const revokedSessions = (events.body.items as { document: { session_id: string } }[]).map((e) => e.document.session_id);
    expect(revokedSessions).toEqual(expect.arrayContaining([victim.sessionId]));
    expect(revokedSessions).toHaveLength(2);
    expect(JSON.stringify(events.body)).not.toContain(victim.accessToken);
  });

  it('lists a sign-out (revoke-token) in the revoked listing with its reason', async () => {
    const session = await newSession('10.5.0.1', 'SignOut');
    expect((await t.http().post('/revoke-token').send({ token: session.accessToken })).status).toBe(204);
    const res = await post(`${revoked}/_query`, { where: { _id: session.sessionId } });
    expect(res.body.items).toEqual([expect.objectContaining({ _id: session.sessionId, revoke_reason: 'revoked', revoked_by: tenant.admin.userId })]);
  });

  it('needs tokens.read to list and tokens.delete to revoke; other memberships are refused', async () => {
    const session = await newSession('10.6.0.1', 'Guarded');
    const reader = await createApplicationWithPermissions(t, tenant.admin, ['tokens.read']);
    expect((await get(active, reader.auth)).status).toBe(200);
    expect((await get(revoked, reader.auth)).status).toBe(200);
    expect((await get(`${active}/${session.sessionId}`, reader.auth)).status).toBe(200);
    expectErrorBody(await del(`${active}/${session.sessionId}`, undefined, reader.auth), 403, 'AccessDenied');

    const nobody = await createApplicationWithPermissions(t, tenant.admin, ['roles.read']);
    expectErrorBody(await get(active, nobody.auth), 403, 'AccessDenied');
    expectErrorBody(await get(revoked, nobody.auth), 403, 'AccessDenied');

    const deleter = await createApplicationWithPermissions(t, tenant.admin, ['tokens.delete'], [`tokens.delete.${session.sessionId}`]);
    expectErrorBody(await del(`${active}/${session.sessionId}`, undefined, deleter.auth), 403, 'AccessDenied');

    expectErrorBody(await get(active, other.admin.auth), 403, 'AccessDenied');
    expectErrorBody(await del(`${active}/${session.sessionId}`, undefined, other.admin.auth), 403, 'AccessDenied');
    // Another membership's session id is not found in this membership.
    const foreign = await newSession('10.6.0.2', 'Foreign', other.admin);
    expectErrorBody(await get(`${active}/${foreign.sessionId}`), 404, 'TokenNotFound');
    expectErrorBody(await del(`${active}/${foreign.sessionId}`), 404, 'TokenNotFound');
    expect((await get(`/memberships/${other.membershipId}/roles`, `Bearer ${foreign.accessToken}`)).status).toBe(200);
    const mine = await get(`${active}?limit=1000`);
    expect((mine.body.items as { membership_id: string }[]).every((s) => s.membership_id === tenant.membershipId)).toBe(true);
    expect((await get(active, inst.admin.auth)).status).toBe(403);
  });
});
