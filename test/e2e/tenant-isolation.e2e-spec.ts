import type { TestApp } from '../support/app';
import {
  bootInstallation,
  createApplication,
  type CreatedMembership,
  createMembership,
  createUser,
  createUserType,
  createWebhook,
  type Installation,
  unique,
} from '../support/api';
import { routeTable } from '../support/route-table';

/**
 * Every route under /memberships/:membershipId, walked with the admin of ANOTHER membership: each
 * answers 403 AccessDenied, shows nothing of the membership and changes nothing. The route list
 * comes from the running app, so a route added later is walked too.
 */
describe('tenant isolation', () => {
  let t: TestApp;
  let inst: Installation;
  let a: CreatedMembership;
  let b: CreatedMembership;
  const ids: Record<string, string> = {};
  /** Everything of A that B must never see: ids, names, the admin's login. */
  const secretsOfA: string[] = [];

  beforeAll(async () => {
    ({ t, inst } = await bootInstallation());
    a = await createMembership(t, inst.admin);
    b = await createMembership(t, inst.admin);
    // Real ids of A's resources, so the walk hits existing objects, not just unknown ones.
    const user = await createUser(t, a.admin);
    ids.users = user._id;
    const application = await createApplication(t, a.admin);
    ids.applications = application.id;
    ids.roles = a.role._id;
    // Passive: kept, never called.
    const webhook = await createWebhook(t, a.admin, 'https://hooks.example.com/never', { status: 'passive' });
    ids.webhooks = webhook._id;
    const userType = await createUserType(t, a.admin, { name: unique('Type') });
    ids['user-types'] = userType._id;
    const provider = await t
      .http()
      .post(`/memberships/${a.membershipId}/providers`)
      .set('Authorization', a.admin.auth)
      .send({ name: unique('Provider'), type: 'oidc', issuer: 'https://accounts.google.com', client_id: unique('client') })
      .expect(201);
    ids.providers = provider.body._id;
    await t
      .http()
      .put(`/memberships/${a.membershipId}`)
      .set('Authorization', a.admin.auth)
      .send({ name: a.membership.name, mail_providers: [{ slug: 'relay', name: 'Relay', type: 'smtp', host: 'smtp.example.com', tls: 'starttls' }] })
      .expect(200);
    const mailhook = await t
      .http()
      .post(`/memberships/${a.membershipId}/mailhooks`)
      .set('Authorization', a.admin.auth)
      .send({ name: unique('Mail'), event: 'UserCreated', mail_provider: 'relay', from_address: 'no-reply@example.com', mail_subject: 'Hello', mail_template: '<p>Hello</p>', send_to_utilizer: true })
      .expect(201);
    ids.mailhooks = mailhook.body._id;
    const policy = await t.http().post(`/memberships/${a.membershipId}/token-code-policies`).set('Authorization', a.admin.auth).send({ name: unique('Policy') }).expect(201);
    ids['token-code-policies'] = policy.body._id;
    const events = await t.http().get(`/memberships/${a.membershipId}/events`).set('Authorization', a.admin.auth);
    ids.events = events.body.items[0]._id;
    const tokens = await t.http().get(`/memberships/${a.membershipId}/active-tokens`).set('Authorization', a.admin.auth);
    ids['active-tokens'] = tokens.body.items[0]._id;
    const candidates: unknown[] = [
      ...Object.values(ids),
      user.username,
      user.email_address,
      application.application.name,
      webhook.name,
      userType.name,
      provider.body.name,
      mailhook.body.name,
      policy.body.name,
      a.admin.username,
      a.admin.userId,
      a.membership.name,
      a.membershipId,
    ];
    // Every one is unique to A (a random part in each), so finding it in an answer means a leak.
    for (const candidate of candidates) {
      expect(typeof candidate === 'string' && candidate.length >= 8 ? candidate : { notDistinctive: candidate }).toEqual(expect.any(String));
      secretsOfA.push(candidate as string);
    }
  });
  afterAll(() => t.close());

  it('answers 403 on every membership-scoped route for the admin of another membership, by Bearer and by Basic, and shows none of its data', async () => {
    // Public routes (a device asking for a code, polling for its pair) take no token by design.
    const routes = routeTable(t.app).filter((route) => route.path.startsWith('/memberships/:membershipId/') && route.access !== 'public');
    expect(routes.length).toBeGreaterThan(30);
    const foreignApp = await createApplication(t, b.admin, { role: 'admin' });
    const walked: string[] = [];
    for (const route of routes) {
      const resource = route.path.split('/')[3];
      const path = route.path
        .replace(':membershipId', a.membershipId)
        .replace(/:[A-Za-z]+/g, ids[resource] ?? '00000000-0000-4000-8000-000000000000');
      for (const auth of [b.admin.auth, foreignApp.basic]) {
        const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
        const res = await t.http()[method](path)
          .set('Authorization', auth)
          .send({ ids: [ids.users ?? 'x'], where: {}, password: 'a long enough password', name: 'x' });
        expect({ route: `${route.method} ${route.path}`, status: res.status, code: res.body.errorCode }).toEqual({
          route: `${route.method} ${route.path}`,
          status: 403,
          code: 'AccessDenied',
        });
        const leaked = secretsOfA.filter((secret) => res.text.includes(secret) || JSON.stringify(res.headers).includes(secret));
        expect({ route: `${route.method} ${route.path}`, leaked }).toEqual({ route: `${route.method} ${route.path}`, leaked: [] });
      }
      walked.push(`${route.method} ${route.path}`);
    }
    expect(walked).toEqual(expect.arrayContaining(['DELETE /memberships/:membershipId/users', 'POST /memberships/:membershipId/events/_query']));
    // Every kind of object was walked with a real id of A, not only with unknown ones.
    const resourcesWithIds = new Set(routes.filter((route) => route.path.includes('/:id')).map((route) => route.path.split('/')[3]));
    expect([...resourcesWithIds].filter((resource) => !ids[resource])).toEqual([]);

    // Nothing of A changed: its user still exists and signs in as before.
    const user = await t.http().get(`/memberships/${a.membershipId}/users/${ids.users}`).set('Authorization', a.admin.auth);
    expect(user.status).toBe(200);
  });

  it('answers 403 or 404 on the membership routes themselves (/memberships/:id) for the admin of another membership, with none of its data', async () => {
    const routes = routeTable(t.app).filter((route) => route.path.startsWith('/memberships/:id'));
    expect(routes.length).toBeGreaterThanOrEqual(4);
    for (const route of routes) {
      const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
      const res = await t.http()[method](route.path.replace(':id', a.membershipId)).set('Authorization', b.admin.auth).send({ membership: { name: 'x' } });
      expect({ route: `${route.method} ${route.path}`, denied: [403, 404].includes(res.status) }).toEqual({ route: `${route.method} ${route.path}`, denied: true });
      expect(secretsOfA.filter((secret) => res.text.includes(secret))).toEqual([]);
    }
    const membership = await t.http().get(`/memberships/${a.membershipId}`).set('Authorization', inst.admin.auth);
    expect(membership.body.name).toBe(a.membership.name);
  });

  it('no _query filter reaches another membership’s rows', async () => {
    for (const resource of ['users', 'roles', 'applications', 'events', 'webhooks', 'user-types', 'active-tokens']) {
      const res = await t
        .http()
        .post(`/memberships/${b.membershipId}/${resource}/_query`)
        .query({ with_count: 'true', limit: 1000 })
        .set('Authorization', b.admin.auth)
        .send({ where: { $or: [{ membership_id: a.membershipId }, { membership_id: { $ne: 'nothing' } }] } });
      if (res.status === 400) {
        // A resource that does not expose membership_id as a filter field refuses the filter outright.
        expect(res.body.errorCode).toBe('InvalidQuery');
        continue;
      }
      expect({ resource, status: res.status }).toEqual({ resource, status: 200 });
      for (const item of res.body.items as Record<string, unknown>[]) {
        if ('membership_id' in item) expect(item.membership_id).toBe(b.membershipId);
      }
    }
  });
});
