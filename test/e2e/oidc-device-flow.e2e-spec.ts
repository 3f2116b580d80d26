import { and, asc, eq, sql } from 'drizzle-orm';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { DATABASE, type Database } from '../../src/database/database';
import { events, tokenCodes } from '../../src/database/schema';
import { createApplication, createMembership, createSignedInUser, eventually, updateMembership, useInstallation, type SignedIn } from '../support/api';
import { scopedToken } from '../support/protected-apps';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/*
 * The device flow in RFC 8628 form at a membership's issuer (contract "Single sign-on"):
 * openid-client's initiateDeviceAuthorization and pollDeviceAuthorizationGrant, unmodified, against
 * the real app; the codes are the membership's device codes, approved as the /device page does.
 */
describe('OpenID Provider: the device flow (RFC 8628)', () => {
  // One second between polls, so that openid-client's loop is quick.
  const suite = useInstallation({ publicUrl: true, env: { DEVICE_POLL_INTERVAL_SECONDS: '1' } });
  const db = () => suite.t.app.get<Database>(DATABASE).db;

  async function tenantWithDeviceClient(oidc: Record<string, unknown> = {}) {
    const tenant = await createMembership(suite.t, suite.admin);
    const app = await createApplication(suite.t, tenant.admin, {
      oidc: { redirect_uris: ['http://127.0.0.1:9/callback'], grant_types: [DEVICE_GRANT, 'refresh_token'], ...oidc },
    } as Record<string, unknown>);
    const issuer = `${suite.t.url}/oidc/${tenant.membershipId}`;
    const config = await client.discovery(new URL(issuer), app.id, oidc.public ? undefined : app.secret, oidc.public ? client.None() : undefined, {
      execute: [client.allowInsecureRequests],
    });
    const { user, session } = await createSignedInUser(suite.t, tenant.admin, { permissions: ['users.read'] });
    return { tenant, app, issuer, config, user, session };
  }

  /** What the /device page's script does once the user signed in there: the code's view, then the decision. */
  async function decideAsThePage(session: SignedIn, verificationUriComplete: string, decision: 'approve' | 'deny') {
    const url = new URL(verificationUriComplete);
    const membershipId = url.searchParams.get('membership_id') as string;
    const userCode = url.searchParams.get('user_code') as string;
    const view = await suite.t.http().get(`/memberships/${membershipId}/codes/${userCode}`).set('Authorization', session.auth);
    expect(view.status).toBe(200);
    return suite.t.http().post(`/memberships/${membershipId}/codes/${userCode}/${decision}`).set('Authorization', session.auth);
  }

  it('openid-client runs the whole flow unmodified: codes of the membership, pending polls, approval on the /device page, ID token and refresh token', async () => {
    const { tenant, app, issuer, config, user, session } = await tenantWithDeviceClient();
    const authorization = await client.initiateDeviceAuthorization(config, { scope: 'openid profile offline_access' });
    expect(authorization).toMatchObject({
      device_code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(/^[23456789BCDFGHJKLMNPQRSTVWXZ]{8}$/),
      verification_uri: `${suite.t.url}/device?membership_id=${tenant.membershipId}`,
      verification_uri_complete: `${suite.t.url}/device?membership_id=${tenant.membershipId}&user_code=${authorization.user_code}`,
      expires_in: 600,
      interval: 1,
    });
    // The page the user opens is the existing /device page.
    const page = await suite.t.http().get(new URL(authorization.verification_uri_complete as string).pathname);
    expect({ status: page.status, type: page.headers['content-type'] }).toEqual({ status: 200, type: expect.stringMatching(/^text\/html/) });

    const polling = client.pollDeviceAuthorizationGrant(config, authorization);
    // The device polls (authorization_pending) before the user decides.
    await eventually(async () => {
      const [row] = await db().select().from(tokenCodes).where(eq(tokenCodes.userCode, authorization.user_code));
      return row?.lastPolledAt ?? undefined;
    }, 'a pending poll');
    const view = await suite.t.http().get(`/memberships/${tenant.membershipId}/codes/${authorization.user_code}`).set('Authorization', session.auth);
    expect(view.body.client_info).toEqual({ name: app.application.name, client_id: app.id, scope: 'openid profile offline_access' });
    expect((await decideAsThePage(session, authorization.verification_uri_complete as string, 'approve')).status).toBe(200);

    const tokens = await polling;
    expect(tokens).toMatchObject({ token_type: 'bearer', access_token: expect.any(String), id_token: expect.any(String), refresh_token: expect.any(String) });
    expect(tokens.scope?.split(' ').sort()).toEqual(['offline_access', 'openid', 'profile']);
    const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
    const access = await jwtVerify(tokens.access_token, jwks, { issuer, typ: 'at+jwt', algorithms: ['ES256'] });
    expect(access.payload).toMatchObject({ sub: user._id, client_id: app.id, aud: app.id });
    const id = await jwtVerify(tokens.id_token as string, jwks, { issuer, audience: app.id, algorithms: ['ES256'] });
    expect(id.payload).toMatchObject({ sub: user._id, preferred_username: user.username });
    expect(tokens.claims()?.sub).toBe(user._id);

    // Introspection and revocation of the user's grant, by openid-client.
    expect(await client.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true, sub: user._id, client_id: app.id, iss: issuer, token_type: 'Bearer' });
    expect(await client.tokenIntrospection(config, tokens.refresh_token as string)).toMatchObject({ active: true, sub: user._id, client_id: app.id });
    await client.tokenRevocation(config, tokens.refresh_token as string, { token_type_hint: 'refresh_token' });
    expect(await client.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    expect(await client.tokenIntrospection(config, tokens.refresh_token as string)).toEqual({ active: false });

    const recorded = await db()
      .select()
      .from(events)
      .where(and(eq(events.membershipId, tenant.membershipId), sql`${events.document} ->> 'client_id' = ${app.id}`))
      .orderBy(asc(events.eventTime));
    const generated = recorded.filter((event) => event.eventType === 'TokenGenerated');
    expect(generated).toHaveLength(1);
    expect(generated[0]).toMatchObject({ utilizerId: user._id, document: { grant: DEVICE_GRANT, client_id: app.id } });
    const revoked = recorded.filter((event) => event.eventType === 'TokenRevoked');
    expect(revoked.length).toBeGreaterThanOrEqual(1);
    // The user's grant's records, each with the client and the grant that issued it.
    for (const event of revoked) {
      expect(event).toMatchObject({ utilizerId: app.id, document: { client_id: app.id, grant: DEVICE_GRANT, user_id: user._id, reason: 'revoked_by_client' } });
    }
    // The code is spent.
    const again = await suite.t
      .http()
      .post(`/oidc/${tenant.membershipId}/token`)
      .auth(app.id, app.secret)
      .type('form')
      .send({ grant_type: DEVICE_GRANT, device_code: authorization.device_code });
    expect({ status: again.status, error: again.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
  });

  it('a public client runs it too (authentication none); without openid there is no ID token, without offline_access no refresh token', async () => {
    const { config, session } = await tenantWithDeviceClient({ public: true });
    const authorization = await client.initiateDeviceAuthorization(config, { scope: 'profile' });
    expect((await decideAsThePage(session, authorization.verification_uri_complete as string, 'approve')).status).toBe(200);
    const tokens = await client.pollDeviceAuthorizationGrant(config, authorization);
    expect(tokens.access_token).toEqual(expect.any(String));
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.refresh_token).toBeUndefined();
  });

  it("RFC 8628 3.5's errors: authorization_pending, slow_down, access_denied, expired_token; invalid_grant for unknown, another client's or the specification's codes", async () => {
    const { tenant, app, config, session } = await tenantWithDeviceClient();
    const poll = (deviceCode: string, who: { id: string; secret: string } = app) =>
      suite.t.http().post(`/oidc/${tenant.membershipId}/token`).auth(who.id, who.secret).type('form').send({ grant_type: DEVICE_GRANT, device_code: deviceCode });
    const errorOf = (res: { status: number; body: { error?: string } }) => ({ status: res.status, error: res.body.error });

    const pending = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    expect(errorOf(await poll(pending.device_code))).toEqual({ status: 400, error: 'authorization_pending' });
    expect(errorOf(await poll(pending.device_code))).toEqual({ status: 400, error: 'slow_down' });
    const [slowed] = await db().select().from(tokenCodes).where(eq(tokenCodes.userCode, pending.user_code));
    expect(slowed.pollInterval).toBe(6);

    const denied = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    expect((await decideAsThePage(session, denied.verification_uri_complete as string, 'deny')).status).toBe(200);
    expect(errorOf(await poll(denied.device_code))).toEqual({ status: 400, error: 'access_denied' });
    const viaLibrary = await client.pollDeviceAuthorizationGrant(config, denied).catch((caught: unknown) => caught);
    expect((viaLibrary as client.ResponseBodyError).error).toBe('access_denied');

    const expired = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    await db().update(tokenCodes).set({ expiresAt: sql`now() - interval '1 second'` }).where(eq(tokenCodes.userCode, expired.user_code));
    expect(errorOf(await poll(expired.device_code))).toEqual({ status: 400, error: 'expired_token' });

    expect(errorOf(await poll('no-such-device-code'))).toEqual({ status: 400, error: 'invalid_grant' });
    const other = await createApplication(suite.t, tenant.admin, { oidc: { redirect_uris: ['http://127.0.0.1:9/cb'], grant_types: [DEVICE_GRANT] } } as Record<string, unknown>);
    expect(errorOf(await poll(pending.device_code, other))).toEqual({ status: 400, error: 'invalid_grant' });
    const specCode = await suite.t.http().post(`/memberships/${tenant.membershipId}/codes`).send({ client_info: { name: 'TV' } });
    expect(errorOf(await poll(specCode.body.device_code as string))).toEqual({ status: 400, error: 'invalid_grant' });
    expect(errorOf(await poll(''))).toEqual({ status: 400, error: 'invalid_request' });
  });

  it("an issuer's code is not redeemed by the specification's JSON poll, which stays as it was", async () => {
    const { tenant, config, session } = await tenantWithDeviceClient();
    const authorization = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    expect((await decideAsThePage(session, authorization.verification_uri_complete as string, 'approve')).status).toBe(200);
    const json = await suite.t.http().post(`/memberships/${tenant.membershipId}/codes/token`).send({ device_code: authorization.device_code });
    expect({ status: json.status, code: json.body.errorCode }).toEqual({ status: 400, code: 'InvalidDeviceCode' });
    // Still approved: the client redeems it.
    expect((await client.pollDeviceAuthorizationGrant(config, authorization)).access_token).toEqual(expect.any(String));
  });

  it('the membership code policy shapes the user code', async () => {
    const { tenant, config } = await tenantWithDeviceClient();
    const policy = await suite.t
      .http()
      .post(`/memberships/${tenant.membershipId}/token-code-policies`)
      .set('Authorization', tenant.admin.auth)
      .send({ name: 'digits', length: 6, contains_letters: false, contains_digits: true, expires_in: 120 });
    expect(policy.status).toBe(201);
    await updateMembership(suite.t, tenant, { code_policy: policy.body.slug });
    const authorization = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    expect(authorization.user_code).toMatch(/^[0-9]{6}$/);
    expect(authorization.expires_in).toBe(120);
  });

  it('a scoped token cannot approve an application sign-in (403); a user-wide trigger after approval denies the code (access_denied)', async () => {
    const { tenant, config, session } = await tenantWithDeviceClient();
    const authorization = await client.initiateDeviceAuthorization(config, { scope: 'openid offline_access' });
    const scoped = await scopedToken(suite.t, session, ['users.read']);
    const refused = await suite.t.http().post(`/memberships/${tenant.membershipId}/codes/${authorization.user_code}/approve`).set('Authorization', scoped);
    expect({ status: refused.status, code: refused.body.errorCode }).toEqual({ status: 403, code: 'AccessDenied' });

    expect((await decideAsThePage(session, authorization.verification_uri_complete as string, 'approve')).status).toBe(200);
    expect((await suite.t.http().get('/revoke-token').query({ 'logout-all': true }).set('Authorization', session.auth)).status).toBe(204);
    const error = await client.pollDeviceAuthorizationGrant(config, authorization).catch((caught: unknown) => caught);
    expect((error as client.ResponseBodyError).error).toBe('access_denied');
  });

  it("a user's grant: another client may introspect its access token but not its refresh token, and cannot revoke either; revoking the access token ends the grant", async () => {
    const { tenant, issuer, config, session } = await tenantWithDeviceClient();
    const other = await createApplication(suite.t, tenant.admin, { oidc: { redirect_uris: ['http://127.0.0.1:9/cb'], grant_types: [DEVICE_GRANT] } } as Record<string, unknown>);
    const otherConfig = await client.discovery(new URL(issuer), other.id, other.secret, undefined, { execute: [client.allowInsecureRequests] });
    const authorization = await client.initiateDeviceAuthorization(config, { scope: 'openid offline_access' });
    expect((await decideAsThePage(session, authorization.verification_uri_complete as string, 'approve')).status).toBe(200);
    const tokens = await client.pollDeviceAuthorizationGrant(config, authorization);
    const refreshToken = tokens.refresh_token as string;

    expect(await client.tokenIntrospection(otherConfig, tokens.access_token)).toMatchObject({ active: true, sub: session.userId });
    expect(await client.tokenIntrospection(otherConfig, refreshToken)).toEqual({ active: false });
    await client.tokenRevocation(otherConfig, tokens.access_token);
    await client.tokenRevocation(otherConfig, refreshToken);
    expect(await client.tokenIntrospection(config, refreshToken)).toMatchObject({ active: true });

    await client.tokenRevocation(config, tokens.access_token);
    expect(await client.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    expect(await client.tokenIntrospection(config, refreshToken, { token_type_hint: 'refresh_token' })).toEqual({ active: false });
    // The user's own sign-in session is untouched.
    expect((await suite.t.http().get('/me').set('Authorization', session.auth)).status).toBe(200);
  });

  it('logout-all after the poll ends the grant the device got', async () => {
    const { config, session } = await tenantWithDeviceClient();
    const authorization = await client.initiateDeviceAuthorization(config, { scope: 'openid offline_access' });
    expect((await decideAsThePage(session, authorization.verification_uri_complete as string, 'approve')).status).toBe(200);
    const tokens = await client.pollDeviceAuthorizationGrant(config, authorization);
    expect(await client.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true });
    expect((await suite.t.http().get('/revoke-token').query({ 'logout-all': true }).set('Authorization', session.auth)).status).toBe(204);
    expect(await client.tokenIntrospection(config, tokens.access_token)).toEqual({ active: false });
    expect(await client.tokenIntrospection(config, tokens.refresh_token as string)).toEqual({ active: false });
  });

  it('device/authorize refusals: no device grant (unauthorized_client), unknown scope, offline_access without refresh_token (invalid_scope), hostile input (4xx, never 500)', async () => {
    const { tenant, app } = await tenantWithDeviceClient();
    const path = `/oidc/${tenant.membershipId}/device/authorize`;
    const codeOnly = await createApplication(suite.t, tenant.admin, { oidc: { redirect_uris: ['http://127.0.0.1:9/cb'] } } as Record<string, unknown>);
    const noGrant = await suite.t.http().post(path).auth(codeOnly.id, codeOnly.secret).type('form').send({ scope: 'openid' });
    expect({ status: noGrant.status, error: noGrant.body.error }).toEqual({ status: 400, error: 'unauthorized_client' });
    const deviceOnly = await createApplication(suite.t, tenant.admin, { oidc: { redirect_uris: ['http://127.0.0.1:9/cb'], grant_types: [DEVICE_GRANT] } } as Record<string, unknown>);
    const offline = await suite.t.http().post(path).auth(deviceOnly.id, deviceOnly.secret).type('form').send({ scope: 'openid offline_access' });
    expect({ status: offline.status, error: offline.body.error }).toEqual({ status: 400, error: 'invalid_scope' });

    const cases: [string | Record<string, unknown>, number, string][] = [
      [{ scope: 'openid admin' }, 400, 'invalid_scope'],
      ['scope=openid&scope=profile', 400, 'invalid_request'],
      [{ scope: 'openid '.repeat(1000) }, 400, 'invalid_request'],
      ['scope=open%00id', 400, 'invalid_request'],
      [`client_id=${app.id}&client_id=${app.id}`, 400, 'invalid_request'],
    ];
    for (const [body, status, error] of cases) {
      const res = await suite.t.http().post(path).auth(app.id, app.secret).type('form').send(body);
      expect({ body, status: res.status, error: res.body.error }).toEqual({ body, status, error });
    }
    const json = await suite.t.http().post(path).auth(app.id, app.secret).send({ scope: 'openid' });
    expect({ status: json.status, error: json.body.error }).toEqual({ status: 415, error: 'invalid_request' });
    const noAuth = await suite.t.http().post(path).type('form').send({ scope: 'openid' });
    expect({ status: noAuth.status, error: noAuth.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    const longDevice = await suite.t.http().post(`/oidc/${tenant.membershipId}/token`).auth(app.id, app.secret).type('form').send({ grant_type: DEVICE_GRANT, device_code: 'd'.repeat(5000) });
    expect({ status: longDevice.status, error: longDevice.body.error }).toEqual({ status: 400, error: 'invalid_request' });
    const repeatedDevice = await suite.t.http().post(`/oidc/${tenant.membershipId}/token`).auth(app.id, app.secret).type('form').send(`grant_type=${encodeURIComponent(DEVICE_GRANT)}&device_code=a&device_code=b`);
    expect({ status: repeatedDevice.status, error: repeatedDevice.body.error }).toEqual({ status: 400, error: 'invalid_request' });
  });
});
