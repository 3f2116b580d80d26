import { startTestApp, type TestApp } from '../support/app';
import { type Installation, setupInstallation } from '../support/factories';
import { createApplication, createMembership, type CreatedMembership } from '../support/resources';
import { routeTable } from '../support/route-table';
import { createUser } from '../support/users';

/**
 * Every route under /memberships/:membershipId, walked with the admin of ANOTHER membership: each
 * answers 403 AccessDenied and changes nothing. The route list comes from the running app, so a
 * route added later is walked too.
 */
describe('tenant isolation', () => {
  let t: TestApp;
  let inst: Installation;
  let a: CreatedMembership;
  let b: CreatedMembership;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startTestApp();
    inst = await setupInstallation(t);
    a = await createMembership(t, inst.admin);
    b = await createMembership(t, inst.admin);
    // Real ids of A's resources, so the walk hits existing objects, not just unknown ones.
    const user = await createUser(t, a.admin);
    ids.users = user._id;
    ids.applications = (await createApplication(t, a.admin)).id;
    ids.roles = a.role._id;
    const events = await t.http().get(`/memberships/${a.membershipId}/events`).set('Authorization', a.admin.auth);
    ids.events = events.body.items[0]._id;
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 403 on every membership-scoped route for the admin of another membership, by Bearer and by Basic', async () => {
    const routes = routeTable(t.app).filter((route) => route.path.startsWith('/memberships/:membershipId/'));
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
      }
      walked.push(`${route.method} ${route.path}`);
    }
    expect(walked).toEqual(expect.arrayContaining(['DELETE /memberships/:membershipId/users', 'POST /memberships/:membershipId/events/_query']));

    // Nothing of A changed: its user still exists and signs in as before.
    const user = await t.http().get(`/memberships/${a.membershipId}/users/${ids.users}`).set('Authorization', a.admin.auth);
    expect(user.status).toBe(200);
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
