import { currentStep, totpAt } from '../support/totp';
import { type ApiCaller, type ApiObject, as, createApplication, createApplicationWithPermissions, createMembership, createRole, createSignedInUser, createUser, expectErrorBody, putBodyOf, signIn, useInstallation, usersPath } from '../support/api';

/**
 * Grants (contract "Grants"): a caller can grant only what it holds, on roles, applications and
 * users; removing a forbidden entry counts as granting what it denied.
 */
describe('grants', () => {
  const suite = useInstallation();
  let rolesBase: string;
  let appsBase: string;
  let usersBase: string;

  /** What every delegated manager here may do: write roles, applications and users, and read users. */
  const MANAGER = ['roles.create', 'roles.update', 'roles.read', 'applications.create', 'applications.update', 'users.create', 'users.update', 'users.read'];

  beforeAll(async () => {
    rolesBase = `/memberships/${suite.admin.membershipId}/roles`;
    appsBase = `/memberships/${suite.admin.membershipId}/applications`;
    usersBase = usersPath(suite.admin.membershipId);
  });


  function expectDeniedGrant(res: { status: number; body: ApiObject }, expression: string): void {
    expectErrorBody(res as never, 403, 'AccessDenied');
    expect(res.body.message).toContain(expression);
  }

  describe('roles', () => {
    it('refuses a role with a permission the caller does not hold, and accepts one it holds (15.6)', async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, MANAGER);
      expectDeniedGrant(await as(suite.t, manager).post(rolesBase, { name: 'escalated', permissions: ['users.read', 'events.read'] }), 'events.read');
      expectDeniedGrant(await as(suite.t, manager).post(rolesBase, { name: 'all of it', permissions: ['*'] }), '*');
      const held = await as(suite.t, manager).post(rolesBase, { name: 'readers', permissions: ['users.read', 'users.read.abc'] });
      expect(held.status).toBe(201);

      const update = await as(suite.t, manager).put(`${rolesBase}/${held.body._id}`, { name: 'readers', permissions: ['users.read', 'events.read'] });
      expectDeniedGrant(update, 'events.read');
      const stored = await as(suite.t, suite.admin).get(`${rolesBase}/${held.body._id}`);
      expect(stored.body.permissions).toEqual(['users.read', 'users.read.abc']);
    });

    it('is wildcard-aware: users.read covers users.read.abc but not users.*', async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, ['roles.create', 'users.read']);
      expect((await as(suite.t, manager).post(rolesBase, { name: 'one user', permissions: ['users.read.abc'] })).status).toBe(201);
      expectDeniedGrant(await as(suite.t, manager).post(rolesBase, { name: 'users any', permissions: ['users.*'] }), 'users.*');
    });

    it("respects the caller's forbidden entries", async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, ['roles.create', 'users.read'], ['users.read.secret']);
      expectDeniedGrant(await as(suite.t, manager).post(rolesBase, { name: 'all users', permissions: ['users.read'] }), 'users.read');
      expectDeniedGrant(await as(suite.t, manager).post(rolesBase, { name: 'the secret', permissions: ['users.read.secret'] }), 'users.read.secret');
      expect((await as(suite.t, manager).post(rolesBase, { name: 'another user', permissions: ['users.read.other'] })).status).toBe(201);
    });

    it("respects the scopes of the caller's token", async () => {
      const managerRole = await createRole(suite.t, suite.admin, { permissions: MANAGER });
      const { session } = await createSignedInUser(suite.t, suite.admin, { role: managerRole.slug });
      const scoped = await suite.t.http().post('/generate-token').set('Authorization', session.auth).send({ scopes: ['roles.create'] });
      expect(scoped.status).toBe(201);
      const caller: ApiCaller = { auth: `Bearer ${scoped.body.access_token}`, membershipId: suite.admin.membershipId };
      expectDeniedGrant(await as(suite.t, caller).post(rolesBase, { name: 'out of scope', permissions: ['users.read'] }), 'users.read');
      expect((await as(suite.t, session).post(rolesBase, { name: 'in full token', permissions: ['users.read'] })).status).toBe(201);
    });

    it('removing a forbidden entry grants what it denied; removing permissions and adding forbidden entries does not (21.9)', async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, MANAGER);
      const role = await createRole(suite.t, suite.admin, { name: 'guarded', permissions: ['events.read', 'users.read'], forbidden: ['events.read'] });
      const path = `${rolesBase}/${role._id}`;
      expectDeniedGrant(await as(suite.t, manager).put(path, { name: 'guarded', permissions: ['events.read', 'users.read'], forbidden: [] }), 'events.read');
      // Taking away and denying are never escalation, even of what the caller does not hold.
      const narrowed = await as(suite.t, manager).put(path, { name: 'guarded', permissions: ['users.read'], forbidden: ['events.read', 'tokens.read'] });
      expect(narrowed.status).toBe(200);
    });
    it("deleting a role takes its forbidden entries from its holders, which grants what they denied (21.9)", async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, ['roles.delete', 'roles.read', 'users.read']);
      const restricted = await createRole(suite.t, suite.admin, { forbidden: ['events.read'] });
      const { session } = await createSignedInUser(suite.t, suite.admin, { role: restricted.slug, permissions: ['events.read'] });
      const events = `/memberships/${suite.admin.membershipId}/events`;
      expectErrorBody(await as(suite.t, session).get(events), 403, 'AccessDenied');

      expectDeniedGrant(await as(suite.t, manager).del(`${rolesBase}/${restricted._id}`), 'events.read');
      expectDeniedGrant(await as(suite.t, manager).del(rolesBase, { ids: [restricted._id] }), 'events.read');
      // The role is still there, and its holder still cannot read events.
      expect((await as(suite.t, suite.admin).get(`${rolesBase}/${restricted._id}`)).status).toBe(200);
      expectErrorBody(await as(suite.t, session).get(events), 403, 'AccessDenied');

      // Only what its holders gain counts: a role without forbidden entries, or one nobody holds, goes freely.
      const plain = await createRole(suite.t, suite.admin, { permissions: ['users.read'] });
      expect((await as(suite.t, manager).del(`${rolesBase}/${plain._id}`)).status).toBe(204);
      const unheld = await createRole(suite.t, suite.admin, { forbidden: ['events.read'] });
      expect((await as(suite.t, manager).del(`${rolesBase}/${unheld._id}`)).status).toBe(204);
      // The admin, who holds events.read, may delete it; and a role forbidding `*` (which no one holds) too.
      expect((await as(suite.t, suite.admin).del(`${rolesBase}/${restricted._id}`)).status).toBe(204);
      const suspended = await createRole(suite.t, suite.admin, { forbidden: ['*'] });
      await createUser(suite.t, suite.admin, { role: suspended.slug, permissions: ['events.read'] });
      expectDeniedGrant(await as(suite.t, manager).del(`${rolesBase}/${suspended._id}`), 'events.read');
      expect((await as(suite.t, suite.admin).del(`${rolesBase}/${suspended._id}`)).status).toBe(204);
    });
  });

  describe('applications', () => {
    it('refuses an application with a role, permission or removed forbidden entry the caller does not hold', async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, MANAGER);
      expectDeniedGrant(await as(suite.t, manager).post(appsBase, { name: 'rogue', role: 'admin' }), '*');
      expectDeniedGrant(await as(suite.t, manager).post(appsBase, { name: 'rogue', permissions: ['events.read'] }), 'events.read');
      const app = await as(suite.t, manager).post(appsBase, { name: 'helper', permissions: ['users.read'] });
      expect(app.status).toBe(201);

      const guarded = await createApplication(suite.t, suite.admin, { permissions: ['events.read'], forbidden: ['events.read'] });
      const unguard = await as(suite.t, manager).put(`${appsBase}/${guarded.id}`, { name: guarded.application.name, permissions: ['events.read'], forbidden: [] });
      expectDeniedGrant(unguard, 'events.read');
    });
  });

  describe('users', () => {
    it('refuses handing out a role or permission the caller does not hold (15.6)', async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, MANAGER);
      const victim = await createUser(suite.t, suite.admin);
      const path = `${usersBase}/${victim._id}`;
      expectDeniedGrant(await as(suite.t, manager).put(path, putBodyOf(victim, { role: 'admin' })), '*');
      expectDeniedGrant(await as(suite.t, manager).put(path, putBodyOf(victim, { permissions: ['events.read'] })), 'events.read');
      const created = await as(suite.t, manager).post(usersBase, { username: 'made-admin', email_address: 'made-admin@example.com', password: 'a long enough password', role: 'admin' });
      expectDeniedGrant(created, '*');

      const held = await as(suite.t, manager).put(path, putBodyOf(victim, { permissions: ['users.read'] }));
      expect(held.status).toBe(200);
      const readers = await createRole(suite.t, suite.admin, { permissions: ['users.read.abc'] });
      expect((await as(suite.t, manager).put(path, putBodyOf(held.body, { role: readers.slug }))).status).toBe(200);
    });

    it('lets a caller take away what it does not hold, and add forbidden entries', async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, MANAGER);
      const user = await createUser(suite.t, suite.admin, { permissions: ['events.read', 'users.read'] });
      const res = await as(suite.t, manager).put(`${usersBase}/${user._id}`, putBodyOf(user, { permissions: ['users.read'], forbidden: ['tokens.read'] }));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ permissions: ['users.read'], forbidden: ['tokens.read'] });
    });

    it('treats removing its own forbidden entry as a grant (21.9)', async () => {
      const user = await createUser(suite.t, suite.admin);
      const promoted = await as(suite.t, suite.admin).put(`${usersBase}/${user._id}`, putBodyOf(user, { permissions: [`users.update.${user._id}`, 'events.read'], forbidden: ['events.read'] }));
      expect(promoted.status).toBe(200);
      const session = await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
      const res = await as(suite.t, session).put(`${usersBase}/${user._id}`, putBodyOf(promoted.body, { forbidden: [] }));
      expectDeniedGrant(res, 'events.read');
      const events = await as(suite.t, session).get(`/memberships/${suite.admin.membershipId}/events`);
      expect(events.status).toBe(403);
    });

    it('lets the admin grant what its role holds: every action on every resource of the service', async () => {
      const user = await createUser(suite.t, suite.admin, { forbidden: ['events.read'] });
      const res = await as(suite.t, suite.admin).put(`${usersBase}/${user._id}`, putBodyOf(user, { role: 'admin', permissions: ['users.*', 'memberships.read'], forbidden: [] }));
      expect(res.status).toBe(200);
      expect((await as(suite.t, suite.admin).post(rolesBase, { name: 'everything listed', permissions: ['users', 'x.webhooks.read.y', 'tokens.delete.abc'] })).status).toBe(201);
      // `*` would also cover memberships of others, which the admin role does not hold.
      expectDeniedGrant(await as(suite.t, suite.admin).post(rolesBase, { name: 'everything', permissions: ['*'] }), '*');
    });

    it("lets the admin grant a third-party API's permissions; anyone else must hold them", async () => {
      expect((await as(suite.t, suite.admin).post(rolesBase, { name: 'order clerks', permissions: ['orders.read', 'orders.update.o-1'] })).status).toBe(201);
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, [...MANAGER, 'orders.read']);
      expect((await as(suite.t, manager).post(rolesBase, { name: 'order readers', permissions: ['orders.read.o-2'] })).status).toBe(201);
      expectDeniedGrant(await as(suite.t, manager).post(rolesBase, { name: 'order writers', permissions: ['orders.update'] }), 'orders.update');
    });
  });
  describe("taking over a principal's credentials counts as granting what it holds", () => {
    it("setting another user's password or e-mail address, or removing its second factors, needs every grant of that user", async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, MANAGER);
      const otherAdmin = await createUser(suite.t, suite.admin, { role: 'admin' });
      const reader = await createUser(suite.t, suite.admin, { permissions: ['users.read'] });
      const userPath = (id: string) => `${usersBase}/${id}`;
      expectErrorBody(await as(suite.t, manager).put(`${userPath(otherAdmin._id)}/change-password`, { password: 'taken over at last' }), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, manager).put(userPath(otherAdmin._id), putBodyOf(otherAdmin, { email_address: 'thief@example.com' })), 403, 'AccessDenied');
      expectErrorBody(await as(suite.t, manager).del(`${userPath(otherAdmin._id)}/mfa`), 403, 'AccessDenied');
      // Nothing changed: the admin still signs in with its password.
      expect((await signIn(suite.t, suite.admin.membershipId, otherAdmin.username, otherAdmin.password)).accessToken).toEqual(expect.any(String));
      // What the manager holds, it may take: a reader's password, and the admin, the other admin's.
      expect((await as(suite.t, manager).put(`${userPath(reader._id)}/change-password`, { password: 'a new reader password' })).status).toBe(204);
      expect((await as(suite.t, suite.admin).put(`${userPath(otherAdmin._id)}/change-password`, { password: 'set by the admin' })).status).toBe(204);
    });

    it("removing one second factor of another user (TOTP alone) needs every grant of that user, as removing them all does", async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, MANAGER);
      const { user: otherAdmin, session } = await createSignedInUser(suite.t, suite.admin, { role: 'admin' });
      const mfaPath = `${usersBase}/${otherAdmin._id}/mfa`;
      const started = await as(suite.t, session).post(`${mfaPath}/totp`, { current_password: otherAdmin.password });
      expect(started.status).toBe(201);
      const confirmed = await as(suite.t, session).post(`${mfaPath}/totp/confirm`, { code: totpAt(started.body.secret, currentStep() - 1) });
      expect(confirmed.status).toBe(200);

      expectErrorBody(await as(suite.t, manager).del(`${mfaPath}/totp`), 403, 'AccessDenied');
      // The admin's TOTP is still there.
      expect((await as(suite.t, suite.admin).get(mfaPath)).body).toMatchObject({ totp: { enabled: true } });
      // The membership's admin holds what the other admin holds, and may.
      expect((await as(suite.t, suite.admin).del(`${mfaPath}/totp`)).status).toBe(204);
    });

    it("a membership's admin still sets the password of another admin of its membership", async () => {
      const tenant = await createMembership(suite.t, suite.admin);
      const member = await createUser(suite.t, tenant.admin, { role: 'admin' });
      const changed = await as(suite.t, tenant.admin).put(`${usersPath(tenant.membershipId)}/${member._id}/change-password`, { password: 'set by the tenant admin' });
      expect(changed.status).toBe(204);
    });

    it("rotating an application's secret (the caller reads the new one) needs what the application holds", async () => {
      const manager = await createApplicationWithPermissions(suite.t, suite.admin, MANAGER);
      const adminApp = await createApplication(suite.t, suite.admin, { role: 'admin' });
      const narrowApp = await createApplicationWithPermissions(suite.t, suite.admin, ['users.read']);
      const rotated = await as(suite.t, manager).post(`${appsBase}/${adminApp.id}/secret`, {});
      expectErrorBody(rotated, 403, 'AccessDenied');
      expect(rotated.body.secret).toBeUndefined();
      // The admin application's secret still works.
      expect((await suite.t.http().get('/me').set('Authorization', adminApp.basic)).status).toBe(200);
      const allowed = await as(suite.t, manager).post(`${appsBase}/${narrowApp.id}/secret`, {});
      expect({ status: allowed.status, secret: typeof allowed.body.secret }).toEqual({ status: 200, secret: 'string' });
    });
  });
});
