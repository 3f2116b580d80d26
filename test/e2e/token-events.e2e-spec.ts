import { Client } from 'pg';
import type { TestApp } from '../support/app';
import { serverUrl } from '../support/database';
import { createApplication, createMembership, createSignedInUser, signIn, useInstallation } from '../support/api';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- event bodies are untyped JSON

/** Every event of a membership, through the events API, oldest first. */
async function allEvents(t: TestApp, auth: string, membershipId: string): Promise<Json[]> {
  const items: Json[] = [];
  for (let skip = 0; ; skip += 1000) {
    const res = await t.http().get(`/memberships/${membershipId}/events`).query({ limit: 1000, skip, sort: 'event_time asc' }).set('Authorization', auth);
    expect(res.status).toBe(200);
    items.push(...(res.body.items as Json[]));
    if (res.body.items.length < 1000) return items;
  }
}

describe('token events: contents of the specification, and no secret in any event', () => {
  const suite = useInstallation();

  it('records TokenGenerated, TokenRefreshed, TokenVerified and TokenRevoked with the specified documents', async () => {
    const m = suite.inst.membership._id as string;
    const session = await signIn(suite.t, m, suite.inst.admin.username, suite.inst.admin.password);
    const refreshed = await suite.t.http().post('/refresh-token').send({ token: session.refreshToken });
    expect(refreshed.status).toBe(201);
    await suite.t.http().get('/verify-token').set('Authorization', `Bearer ${refreshed.body.access_token}`).expect(200);
    await suite.t.http().post('/verify-token').send({ token: `Bearer ${refreshed.body.refresh_token}` }).expect(200);
    await suite.t.http().get('/verify-token').set('Authorization', suite.inst.application.basic).expect(200);
    await suite.t.http().get('/revoke-token').set('Authorization', `Bearer ${refreshed.body.access_token}`).expect(204);

    const events = await allEvents(suite.t, suite.inst.admin.auth, m);
    const ofType = (type: string) => events.filter((e) => e.event_type === type);

    const generated = ofType('TokenGenerated').at(-1)!;
    expect(generated).toMatchObject({ utilizer_id: suite.inst.admin.userId, membership_id: m, prior: null });
    expect(generated.event_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(generated.document).toEqual({
      user: expect.objectContaining({ _id: suite.inst.admin.userId, username: suite.inst.admin.username }),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token_expires_in: 86400,
      created_at: refreshed.body.created_at,
    });
    const refreshedEvent = ofType('TokenRefreshed').at(-1)!;
    expect(refreshedEvent.document).toEqual(generated.document);

    const verified = ofType('TokenVerified');
    expect(verified.map((e) => e.document)).toEqual(
      expect.arrayContaining([
        { token_type: 'Bearer', is_refresh_token: false, expires_at: expect.any(String) },
        { token_type: 'Bearer', is_refresh_token: true, expires_at: expect.any(String) },
        { token_type: 'Basic', application_id: suite.inst.application.id },
      ]),
    );
    const revoked = ofType('TokenRevoked');
    expect(revoked).toHaveLength(1);
    expect(revoked[0].document).toMatchObject({ token_type: 'Bearer', expire_time: expect.any(String) });
    expect(new Date(revoked[0].document.expire_time).getTime()).toBe((JSON.parse(Buffer.from(refreshed.body.access_token.split('.')[1], 'base64url').toString()).exp as number) * 1000);
  });

  // TokenVerified is written just after the answer (issue 14 allowed it past a 5% cost; it was 8 to
  // 10 points of the floor, docs/benchmarks.md): with the events table locked against writes from
  // a connection of the test's own, the verification still answers, its event is not stored yet,
  // and the instance's own _query waits for it once the lock goes (so: on the PostgreSQL server only).
  (serverUrl() ? it : it.skip)('answers a verification before its event is stored, and its own _query waits for the event', async () => {
    const m = suite.inst.membership._id as string;
    const application = suite.inst.application.id;
    const basic = `Basic ${application}:${suite.inst.application.secret}`;
    const verifications = async (): Promise<number> => {
      const res = await suite.t
        .http()
        .post(`/memberships/${m}/events/_query`)
        .query({ limit: 1000 })
        .set('Authorization', suite.inst.admin.auth)
        .send({ where: { event_type: 'TokenVerified', utilizer_id: application } });
      expect(res.status).toBe(200);
      return (res.body.items as Json[]).length;
    };
    const before = await verifications();

    const locker = new Client({ connectionString: suite.t.databaseUrl });
    await locker.connect();
    const storedNow = async () =>
      Number((await locker.query<{ n: string }>("select count(*) as n from events where event_type = 'TokenVerified' and utilizer_id = $1", [application])).rows[0].n);
    try {
      await locker.query('begin');
      await locker.query('lock table events in exclusive mode'); // reads go on, inserts wait
      const res = await suite.t.http().get('/verify-token').set('Authorization', basic);
      expect(res.status).toBe(200);
      expect(await storedNow()).toBe(before);
      const listed = verifications(); // waits for the pending write, which waits for the lock
      await new Promise((resolve) => setTimeout(resolve, 300));
      await locker.query('commit');
      expect(await listed).toBe(before + 1);
      expect(await storedNow()).toBe(before + 1);
    } finally {
      await locker.end();
    }
  });

  // One TokenVerified per verification answered 200, none for a refusal: a forged signature, a
  // revoked session, a rotated signing key, a frozen user.
  it('records TokenVerified for each verification that answers 200 and for no refused one', async () => {
    const tenant = await createMembership(suite.t, suite.inst.admin);
    const m = tenant.membershipId;
    const { user, session } = await createSignedInUser(suite.t, tenant.admin);
    const recorded = async (): Promise<number> =>
      (await allEvents(suite.t, tenant.admin.auth, m)).filter((e) => e.event_type === 'TokenVerified' && e.utilizer_id === user._id).length;
    const verify = (token: string) => suite.t.http().get('/verify-token').set('Authorization', `Bearer ${token}`);

    for (let i = 0; i < 3; i++) await verify(session.accessToken).expect(200);
    await verify(session.refreshToken).expect(200);
    expect(await recorded()).toBe(4);

    // a forged signature, a token of another record, a revoked session: refused, nothing stored
    const [header, payload] = session.accessToken.split('.');
    await verify(`${header}.${payload}.${Buffer.from('forged').toString('base64url')}`).expect(401);
    const second = await signIn(suite.t, m, user.username, user.password);
    await suite.t.http().get('/revoke-token').set('Authorization', second.auth).expect(204);
    await verify(second.accessToken).expect(401);
    await verify(second.refreshToken).expect(401);
    expect(await recorded()).toBe(4);

    // a rotated signing key: the old token is refused, a new one verifies and is recorded
    const rotated = await suite.t.http().post(`/memberships/${m}/secret-key`).set('Authorization', tenant.admin.auth);
    expect(rotated.status).toBe(200);
    await verify(session.accessToken).expect(401);
    const fresh = await signIn(suite.t, m, user.username, user.password);
    await verify(fresh.accessToken).expect(200);
    await verify(fresh.accessToken).expect(200);
    const admin = await signIn(suite.t, m, tenant.admin.username, tenant.admin.password);
    const count = (await allEvents(suite.t, admin.auth, m)).filter((e) => e.event_type === 'TokenVerified' && e.utilizer_id === user._id).length;
    expect(count).toBe(6);

    // a frozen user: refused, nothing stored
    await suite.t.http().post(`/memberships/${m}/users/${user._id}/freeze`).set('Authorization', admin.auth).expect(200);
    const frozen = await verify(fresh.accessToken);
    expect(frozen.status).toBe(401);
    expect((await allEvents(suite.t, admin.auth, m)).filter((e) => e.event_type === 'TokenVerified' && e.utilizer_id === user._id)).toHaveLength(6);
  });

  it('a scan of every event finds no token string, password, hash or secret', async () => {
    const secrets: string[] = [suite.inst.membership.secret_key, suite.inst.application.secret, suite.inst.admin.password, suite.inst.admin.accessToken, suite.inst.admin.refreshToken];
    const tenant = await createMembership(suite.t, suite.inst.admin, { application: true });
    secrets.push(tenant.membership.secret_key, tenant.admin.password, tenant.admin.accessToken, tenant.admin.refreshToken);
    if (tenant.application) secrets.push(tenant.application.secret);

    for (const caller of [suite.inst.admin, tenant.admin]) {
      const app = await createApplication(suite.t, caller);
      secrets.push(app.secret);
      const rotated = await suite.t.http().post(`/memberships/${caller.membershipId}/applications/${app.id}/secret`).set('Authorization', caller.auth);
      expect(rotated.status).toBe(200);
      secrets.push(rotated.body.secret);
      await suite.t.http().get('/me').set('Authorization', `Basic ${app.id}:${rotated.body.secret}`).expect(200);
      await suite.t.http().get('/verify-token').set('Authorization', `Basic ${app.id}:${rotated.body.secret}`).expect(200);

      const { user, session } = await createSignedInUser(suite.t, caller, { password: 'user password one', permissions: ['users.read'] });
      secrets.push('user password one', session.accessToken, session.refreshToken);
      const scoped = await suite.t.http().post('/generate-token').set('Authorization', session.auth).send({ scopes: ['users.read'] });
      secrets.push(scoped.body.access_token);
      const refreshed = await suite.t.http().get('/refresh-token').set('Authorization', `Bearer ${session.refreshToken}`);
      secrets.push(refreshed.body.access_token, refreshed.body.refresh_token);
      await suite.t.http().post('/verify-token').send({ token: refreshed.body.access_token }).expect(200);
      await suite.t
        .http()
        .put(`/memberships/${caller.membershipId}/users/${user._id}/change-password`)
        .set('Authorization', caller.auth)
        .send({ password: 'user password two' })
        .expect(204);
      secrets.push('user password two');
      const webhook = await suite.t
        .http()
        .post(`/memberships/${caller.membershipId}/webhooks`)
        .set('Authorization', caller.auth)
        .send({ name: 'scan', event: 'UserUpdated', status: 'passive', try_count: 1, secret: 'webhook-signing-secret-xyz', request: { method: 'POST', url: 'https://hooks.example.com/x' } });
      expect(webhook.status).toBe(201);
      secrets.push('webhook-signing-secret-xyz');
      await suite.t.http().post(`/memberships/${caller.membershipId}/users/${user._id}/freeze`).set('Authorization', caller.auth).expect(200);
      await suite.t.http().get('/revoke-token').query({ 'logout-all': 'true' }).set('Authorization', caller.auth).expect(204);
    }

    const newAdmin = await signIn(suite.t, suite.inst.membership._id, suite.inst.admin.username, suite.inst.admin.password);
    const tenantAdmin = await signIn(suite.t, tenant.membershipId, tenant.admin.username, tenant.admin.password);
    const everything = [
      ...(await allEvents(suite.t, newAdmin.auth, suite.inst.membership._id)),
      ...(await allEvents(suite.t, tenantAdmin.auth, tenant.membershipId)),
    ];
    expect(everything.length).toBeGreaterThan(30);
    const types = new Set(everything.map((e) => e.event_type));
    for (const type of ['TokenGenerated', 'TokenRefreshed', 'TokenVerified', 'TokenRevoked', 'UserCreated', 'UserPasswordChanged', 'UserUpdated', 'ApplicationCreated', 'ApplicationUpdated', 'WebhookCreated']) {
      expect(types).toContain(type);
    }
    const text = JSON.stringify(everything);
    for (const [index, secret] of secrets.entries()) {
      expect({ index, present: typeof secret === 'string' && secret.length > 0 }).toEqual({ index, present: true });
      expect(text.includes(secret)).toBe(false);
    }
    expect(text).not.toMatch(/\$argon2/);
    expect(text).not.toMatch(/"(password|password_hash|secret|secret_key|secret_digest|access_token|refresh_token)"/);
  });
});
