import { createRole, createSignedInUser, type SignedIn, useInstallation } from '../support/api';

/**
 * The permission decision as callers see it: /roles/check-permission answers with the reason,
 * and the management routes enforce the same decision.
 */
describe('permissions: role and own grants, forbidden entries, scopes, own records', () => {
  const suite = useInstallation();
  let m: string;
  beforeAll(() => (m = suite.inst.membership._id));

  const check = async (session: SignedIn, permission: string) => {
    const res = await suite.t.http().get('/roles/check-permission').query({ permission }).set('Authorization', session.auth);
    expect(res.status).toBe(200);
    return res.body as { allowed: boolean; reason: string; permission: string };
  };

  it('role grant and role forbidden: forbidden wins, and routes enforce it', async () => {
    const role = await createRole(suite.t, suite.inst.admin, { permissions: ['users.read', 'roles.*'], forbidden: ['roles.delete'] });
    const { user, session } = await createSignedInUser(suite.t, suite.inst.admin, { role: role.slug });
    expect(await check(session, 'users.read')).toMatchObject({ allowed: true, reason: 'role_permission', permission: `${user._id}.users.read.*` });
    expect(await check(session, 'roles.update')).toMatchObject({ allowed: true, reason: 'role_permission' });
    expect(await check(session, 'roles.delete')).toMatchObject({ allowed: false, reason: 'forbidden' });
    expect(await check(session, 'webhooks.read')).toMatchObject({ allowed: false, reason: 'no_permission' });

    await suite.t.http().get(`/memberships/${m}/users`).set('Authorization', session.auth).expect(200);
    const deleteRole = await suite.t.http().delete(`/memberships/${m}/roles/${role._id}`).set('Authorization', session.auth);
    expect(deleteRole.status).toBe(403);
    expect(deleteRole.body.errorCode).toBe('AccessDenied');
    const webhooks = await suite.t.http().get(`/memberships/${m}/webhooks`).set('Authorization', session.auth);
    expect(webhooks.status).toBe(403);
  });

  it('own grant and own forbidden, also against a role that grants', async () => {
    const role = await createRole(suite.t, suite.inst.admin, { permissions: ['events.read'] });
    const { session } = await createSignedInUser(suite.t, suite.inst.admin, {
      role: role.slug,
      permissions: ['webhooks.read', 'users.read'],
      forbidden: ['events.read', 'users.read.secret-object'],
    });
    expect(await check(session, 'webhooks.read')).toMatchObject({ allowed: true, reason: 'own_permission' });
    expect(await check(session, 'events.read')).toMatchObject({ allowed: false, reason: 'forbidden' });
    expect(await check(session, 'users.read.some-object')).toMatchObject({ allowed: true, reason: 'own_permission' });
    expect(await check(session, 'users.read.secret-object')).toMatchObject({ allowed: false, reason: 'forbidden' });
    await suite.t.http().get(`/memberships/${m}/webhooks`).set('Authorization', session.auth).expect(200);
    expect((await suite.t.http().get(`/memberships/${m}/events`).set('Authorization', session.auth)).status).toBe(403);
  });

  it('a user without a role has only its own lists and the own-record rule', async () => {
    const { user, session } = await createSignedInUser(suite.t, suite.inst.admin);
    expect(await check(session, 'users.read')).toMatchObject({ allowed: false, reason: 'no_permission' });
    expect(await check(session, `users.read.${user._id}`)).toMatchObject({ allowed: true, reason: 'own_record' });
    expect(await check(session, `users.change-password.${user._id}`)).toMatchObject({ allowed: true, reason: 'own_record' });
    expect(await check(session, `users.delete.${user._id}`)).toMatchObject({ allowed: false, reason: 'no_permission' });
    await suite.t.http().get(`/memberships/${m}/users/${user._id}`).set('Authorization', session.auth).expect(200);
    expect((await suite.t.http().get(`/memberships/${m}/users/${suite.inst.admin.userId}`).set('Authorization', session.auth)).status).toBe(403);
    expect((await suite.t.http().get(`/memberships/${m}/users`).set('Authorization', session.auth)).status).toBe(403);
  });

  it('scoped tokens limit what the user may do and never grant', async () => {
    const { session } = await createSignedInUser(suite.t, suite.inst.admin, { permissions: ['users.read', 'roles.read'] });
    const scoped = await suite.t.http().post('/generate-token').set('Authorization', session.auth).send({ scopes: ['users.read'] });
    expect(scoped.status).toBe(201);
    const narrow: SignedIn = { ...session, accessToken: scoped.body.access_token, auth: `Bearer ${scoped.body.access_token}` };
    expect(await check(narrow, 'users.read')).toMatchObject({ allowed: true, reason: 'own_permission' });
    expect(await check(narrow, 'roles.read')).toMatchObject({ allowed: false, reason: 'scope' });
    await suite.t.http().get(`/memberships/${m}/users`).set('Authorization', narrow.auth).expect(200);
    expect((await suite.t.http().get(`/memberships/${m}/roles`).set('Authorization', narrow.auth)).status).toBe(403);
    // A scope the user does not hold cannot be requested.
    const wider = await suite.t.http().post('/generate-token').set('Authorization', session.auth).send({ scopes: ['webhooks.read'] });
    expect(wider.body.errorCode).toBe('UserHasNoPermissionForThisScope');
  });

  it('validates the expression and the subject it is checked for', async () => {
    const missing = await suite.t.http().get('/roles/check-permission').set('Authorization', suite.inst.admin.auth);
    expect(missing.status).toBe(400);
    expect(missing.body.errorCode).toBe('PermissionRequired');
    for (const bad of ['users..read', 'a.b.c.d.e', 'us*rs.read', 'users read']) {
      const res = await suite.t.http().get('/roles/check-permission').query({ permission: bad }).set('Authorization', suite.inst.admin.auth);
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('InvalidPermission');
    }
    const post = await suite.t.http().post('/roles/check-permission').set('Authorization', suite.inst.admin.auth).send({ permission: 'users.read' });
    expect(post.status).toBe(200);
    expect(post.body.allowed).toBe(true);
    // Four segments name the subject: a role permission (subject *) covers anyone.
    expect(await check(suite.inst.admin, 'someone-else.users.read.*')).toMatchObject({ allowed: true, permission: 'someone-else.users.read.*' });
    const app = await suite.t.http().get('/roles/check-permission').query({ permission: 'users.read' }).set('Authorization', suite.inst.application.basic);
    expect(app.body).toMatchObject({ allowed: true, reason: 'role_permission' });
    expect((await suite.t.http().get('/roles/check-permission').query({ permission: 'users.read' })).status).toBe(401);
  });
});
