import { createHash, randomUUID } from 'node:crypto';
import type { Response } from 'supertest';
import * as client from 'openid-client';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { SigningKeys } from '../../src/oidc/signing-keys';
import { as, createApplication, createMembership, createUser, expectErrorBody, eventsAbout, putBodyOf, queryEvents, signIn, useInstallation } from '../support/api';
import { authorizationRequest as requestOf } from '../support/oidc-authorization-request';
import { PageBrowser } from '../support/oidc-browser';
import { serverUrl } from '../support/database';
import { overlapWithHeldStatement } from '../support/held-statement';

/*
 * The authorization code flow with PKCE driven by openid-client, the certified relying party
 * (contract "Single sign-on"): discovery, the authorization URL, the pages followed over HTTP by
 * their forms' actions, the code exchange with openid-client's own state, nonce, iss and ID token
 * checks, refresh with rotation and reuse detection, userinfo, end session; access tokens
 * verified with jose's remote JWKS as a resource server would.
 */
describe('OpenID Provider: authorization code flow', () => {
  // Loopback webhooks allowed: one test holds a refresh up at its webhook delivery's insert.
  const suite = useInstallation({ publicUrl: true, env: { OUTBOUND_ALLOW: '127.0.0.1/32' } });
  const CALLBACK = 'http://127.0.0.1:9/callback';
  const SIGNED_OUT = 'http://127.0.0.1:9/signed-out';

  async function setup(oidc: Record<string, unknown> = {}, appName?: string) {
    const tenant = await createMembership(suite.t, suite.admin);
    const app = await createApplication(suite.t, tenant.admin, {
      ...(appName ? { name: appName } : {}),
      oidc: { redirect_uris: [CALLBACK], post_logout_redirect_uris: [SIGNED_OUT], ...oidc },
    } as Record<string, unknown>);
    const user = await createUser(suite.t, tenant.admin, { firstname: 'Grace', lastname: 'Hopper' });
    const issuer = `${suite.t.url}/oidc/${tenant.membershipId}`;
    const config = await client.discovery(new URL(issuer), app.id, app.secret, undefined, { execute: [client.allowInsecureRequests] });
    return { tenant, app, user, issuer, config, browser: new PageBrowser(), jwks: createRemoteJWKSet(new URL(`${issuer}/jwks`)) };
  }
  type Setup = Awaited<ReturnType<typeof setup>>;

  const authorizationRequest = (s: Setup, scope?: string, extra?: Record<string, string>) => requestOf(s.config, CALLBACK, scope, extra);

  /** Runs the pages as a user would: login, then consent when asked; answers the redirect to the client. */
  async function signInThroughPages(s: Setup, request: { url: URL }, options: { password?: string; consent?: 'allow' | 'deny' } = {}) {
    let page = await s.browser.follow(request.url.href, suite.t.url);
    if (page.html.includes('name="password"')) {
      page = await s.browser.submit(page, { username: s.user.username, password: options.password ?? s.user.password }, suite.t.url);
    }
    if (page.html.includes('name="decision"')) page = await s.browser.submit(page, { decision: options.consent ?? 'allow' }, suite.t.url);
    return page;
  }

  async function codeFlow(s: Setup, scope?: string) {
    const request = await authorizationRequest(s, scope);
    const landed = await signInThroughPages(s, request);
    expect(landed.status).toBe(303);
    expect(landed.location).toMatch(new RegExp(`^${CALLBACK}\\?`));
    const tokens = await client.authorizationCodeGrant(s.config, new URL(landed.location!), {
      pkceCodeVerifier: request.verifier,
      expectedState: request.state,
      expectedNonce: request.nonce,
      idTokenExpected: true,
    });
    return { tokens, request, landed };
  }

  it('signs in, consents, exchanges the code; ID token, access token (RFC 9068), userinfo, refresh, end session', async () => {
    const s = await setup();
    const { tokens, landed } = await codeFlow(s);
    expect(new URL(landed.location!).searchParams.get('iss')).toBe(s.issuer);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: s.issuer, sub: s.user._id, aud: s.app.id, amr: ['pwd'], preferred_username: s.user.username, email: s.user.email_address, email_verified: false, name: 'Grace Hopper' });
    expect(tokens.scope).toBe('openid profile email offline_access');
    const access = await jwtVerify(tokens.access_token, s.jwks, { issuer: s.issuer, audience: s.app.id, typ: 'at+jwt', algorithms: ['ES256'] });
    expect(access.payload).toMatchObject({ sub: s.user._id, client_id: s.app.id, scope: 'openid profile email offline_access', sid: claims.sid });
    // at_hash (OpenID Connect Core 3.1.3.6): the left half of the access token's SHA-256, base64url; a refresh's ID token names its own.
    const atHash = (token: string) => createHash('sha256').update(token).digest().subarray(0, 16).toString('base64url');
    expect(claims.at_hash).toBe(atHash(tokens.access_token));

    const info = await client.fetchUserInfo(s.config, tokens.access_token, s.user._id);
    expect(info).toMatchObject({ sub: s.user._id, email: s.user.email_address, preferred_username: s.user.username });

    const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
    expect(refreshed.refresh_token).toBeDefined();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.claims()?.sub).toBe(s.user._id);
    expect(refreshed.claims()?.at_hash).toBe(atHash(refreshed.access_token));
    await client.fetchUserInfo(s.config, refreshed.access_token, s.user._id);

    const generated = await eventsAbout(suite.t, s.tenant.membershipId, 'TokenGenerated', s.user._id);
    expect(generated.map((e) => (e.document).grant)).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    expect((await eventsAbout(suite.t, s.tenant.membershipId, 'OidcConsentGranted', s.user._id)).length).toBe(1);

    // A second authorization in the same browser: single sign-on and remembered consent, straight to the client.
    const again = await authorizationRequest(s);
    const direct = await s.browser.follow(again.url.href, suite.t.url);
    expect(direct.status).toBe(303);
    expect(direct.location).toMatch(/[?&]code=/);

    const end = client.buildEndSessionUrl(s.config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'bye' });
    const out = await s.browser.request(end.href);
    expect(out.status).toBe(303);
    expect(out.location).toBe(`${SIGNED_OUT}?state=bye`);
    // The session ended: its tokens with it, and the next authorization asks to sign in.
    await expect(client.fetchUserInfo(s.config, refreshed.access_token, s.user._id)).rejects.toThrow();
    const afterLogout = await s.browser.follow((await authorizationRequest(s)).url.href, suite.t.url);
    expect(afterLogout.html).toContain('name="password"');
  });

  it('logout: an expired id_token_hint still names the client (RP-Initiated Logout 2); a forged one names no client', async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s, 'openid');
    const now = Math.floor(Date.now() / 1000);
    const issued = decodeJwt(tokens.id_token!);
    const keys = suite.t.app.get(SigningKeys);
    const expired = await keys.sign(s.tenant.membershipId, { ...issued, iat: now - 7200, exp: now - 3600 }, 'JWT');
    // No client_id (openid-client's buildEndSessionUrl would add one): only the hint can name the client.
    const logout = (hint: string) =>
      s.browser.request(`${s.issuer}/logout?${new URLSearchParams({ id_token_hint: hint, post_logout_redirect_uri: SIGNED_OUT, state: 'bye' }).toString()}`);
    const out = await logout(expired);
    expect({ status: out.status, location: out.location }).toEqual({ status: 303, location: `${SIGNED_OUT}?state=bye` });
    // The same claims with another signature: no client is named, so no redirect, only the signed-out page.
    const [header, payload] = expired.split('.');
    const forged = await logout(`${header}.${payload}.${Buffer.alloc(64, 1).toString('base64url')}`);
    expect({ status: forged.status, location: forged.location }).toEqual({ status: 400, location: undefined });
  });

  it('logout: an id_token_hint the issuer did not sign (forged, alg none) never redirects, even with client_id (RP-Initiated Logout 2)', async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s, 'openid');
    const [header, payload] = tokens.id_token!.split('.');
    const forged = `${header}.${payload}.${Buffer.alloc(64, 1).toString('base64url')}`;
    const algNone = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    for (const hint of [forged, algNone]) {
      // openid-client's buildEndSessionUrl names the client as well: the hint must be checked all the same.
      const url = client.buildEndSessionUrl(s.config, { id_token_hint: hint, post_logout_redirect_uri: SIGNED_OUT, state: 'bye' });
      expect(url.searchParams.get('client_id')).toBe(s.app.id);
      const out = await s.browser.request(url.href);
      expect({ status: out.status, location: out.location }).toEqual({ status: 400, location: undefined });
    }
    // The issuer's own hint still leads back to the client.
    const real = await s.browser.request(client.buildEndSessionUrl(s.config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'bye' }).href);
    expect({ status: real.status, location: real.location }).toEqual({ status: 303, location: `${SIGNED_OUT}?state=bye` });
  });

  it('logout by POST (RP-Initiated Logout 1.0 2): the form\'s parameters; without the cookie (a cross-site post) the hint\'s sid names the session to end', async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s);
    // A cross-site form post carries no SameSite=Lax cookie: this one carries none.
    const res = await fetch(`${s.issuer}/logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ id_token_hint: tokens.id_token!, post_logout_redirect_uri: SIGNED_OUT, state: 'bye' }),
      redirect: 'manual',
    });
    expect({ status: res.status, location: res.headers.get('location') }).toEqual({ status: 303, location: `${SIGNED_OUT}?state=bye` });
    // The session ended: its tokens with it, and the browser's cookie opens nothing any more.
    await expect(client.fetchUserInfo(s.config, tokens.access_token, s.user._id)).rejects.toThrow();
    await expect(client.refreshTokenGrant(s.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await s.browser.follow((await authorizationRequest(s)).url.href, suite.t.url)).html).toContain('name="password"');
  });

  it("logout with another user's id_token_hint leaves this browser's session alone, its cookie included", async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s, 'openid');
    const keys = suite.t.app.get(SigningKeys);
    const someoneElse = await keys.sign(s.tenant.membershipId, { ...decodeJwt(tokens.id_token!), sub: randomUUID() }, 'JWT');
    const out = await s.browser.request(`${s.issuer}/logout?${new URLSearchParams({ id_token_hint: someoneElse }).toString()}`);
    expect(out.status).toBe(200);
    // Still signed in: the next authorization (the scope consented before) goes straight back to the client.
    const direct = await s.browser.follow((await authorizationRequest(s, 'openid')).url.href, suite.t.url);
    expect({ status: direct.status, code: /[?&]code=/.test(direct.location ?? '') }).toEqual({ status: 303, code: true });
  });

  it('a code is single use: the second exchange is invalid_grant and revokes what the first issued', async () => {
    const s = await setup();
    const request = await authorizationRequest(s);
    const landed = await signInThroughPages(s, request);
    const callback = new URL(landed.location!);
    const checks = { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce };
    const tokens = await client.authorizationCodeGrant(s.config, callback, checks);
    await expect(client.authorizationCodeGrant(s.config, callback, checks)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.fetchUserInfo(s.config, tokens.access_token, s.user._id)).rejects.toThrow();
    await expect(client.refreshTokenGrant(s.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // TokenRevoked names the client and the grant that issued the revoked tokens.
    const revoked = await queryEvents(suite.t, s.tenant.admin, { event_type: 'TokenRevoked', 'document.client_id': s.app.id });
    expect(revoked.map((event) => event.document)).toContainEqual(
      expect.objectContaining({ client_id: s.app.id, grant: 'authorization_code', reason: 'authorization_code_reuse', user_id: s.user._id }),
    );
  });

  it('two exchanges of one code at once: one answers tokens, the other invalid_grant, and what the first issued is revoked', async () => {
    const s = await setup();
    const request = await authorizationRequest(s);
    const code = new URL((await signInThroughPages(s, request)).location!).searchParams.get('code')!;
    const exchange = () =>
      suite.t
        .http()
        .post(`/oidc/${s.tenant.membershipId}/token`)
        .auth(s.app.id, s.app.secret)
        .type('form')
        .send({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: request.verifier });
    const answers = await Promise.all([exchange(), exchange()]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 400]);
    const issued = answers.find((answer) => answer.status === 200)!.body as { access_token: string };
    expect(answers.find((answer) => answer.status === 400)!.body.error).toBe('invalid_grant');
    await expect(client.fetchUserInfo(s.config, issued.access_token, s.user._id)).rejects.toThrow();
  });

  it('a code whose user was deactivated after sign-in is invalid_grant', async () => {
    const s = await setup();
    const request = await authorizationRequest(s);
    const callback = new URL((await signInThroughPages(s, request)).location!);
    const userPath = `/memberships/${s.tenant.membershipId}/users/${s.user._id}`;
    const current = await suite.t.http().get(userPath).set('Authorization', s.tenant.admin.auth);
    const deactivated = await suite.t
      .http()
      .put(userPath)
      .set('Authorization', s.tenant.admin.auth)
      .send(putBodyOf(current.body as Record<string, unknown>, { is_active: false }));
    expect(deactivated.status).toBe(200);
    await expect(
      client.authorizationCodeGrant(s.config, callback, { pkceCodeVerifier: request.verifier, expectedState: request.state, expectedNonce: request.nonce }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('a wrong verifier, another redirect_uri, another client: invalid_grant', async () => {
    const s = await setup();
    const request = await authorizationRequest(s);
    const landed = await signInThroughPages(s, request);
    const code = new URL(landed.location!).searchParams.get('code')!;
    const token = (form: Record<string, string>, auth: [string, string] = [s.app.id, s.app.secret]) =>
      suite.t.http().post(`/oidc/${s.tenant.membershipId}/token`).auth(...auth).type('form').send({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: request.verifier, ...form });
    const wrongVerifier = await token({ code_verifier: client.randomPKCECodeVerifier() });
    expect(wrongVerifier.body).toEqual({ error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge' });
    expect((await token({ code_verifier: 'too-short' })).body.error).toBe('invalid_grant');
    expect((await token({ code_verifier: '' })).body.error).toBe('invalid_grant');
    expect((await token({ redirect_uri: 'http://127.0.0.1:9/other' })).body.error).toBe('invalid_grant');
    const other = await createApplication(suite.t, s.tenant.admin, { oidc: { redirect_uris: [CALLBACK] } } as Record<string, unknown>);
    expect((await token({}, [other.id, other.secret])).body.error).toBe('invalid_grant');
    // None of those used the code up: the right exchange still works.
    const ok = await token({});
    expect(ok.status).toBe(200);
    expect(ok.headers['cache-control']).toBe('no-store');
  });

  it("a client's user tokens follow its application: deactivated, its access token is refused at userinfo and introspects inactive", async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s);
    await client.fetchUserInfo(s.config, tokens.access_token, s.user._id);
    const path = `/memberships/${s.tenant.membershipId}/applications/${s.app.id}`;
    const current = (await as(suite.t, s.tenant.admin).get(path)).body;
    expect((await as(suite.t, s.tenant.admin).put(path, { name: current.name, oidc: current.oidc, is_active: false })).status).toBe(200);
    await expect(client.fetchUserInfo(s.config, tokens.access_token, s.user._id)).rejects.toThrow();
    const resourceServer = await createApplication(suite.t, s.tenant.admin, { oidc: { redirect_uris: [CALLBACK] } } as Record<string, unknown>);
    const introspected = await suite.t.http().post(`/oidc/${s.tenant.membershipId}/introspect`).auth(resourceServer.id, resourceServer.secret).type('form').send({ token: tokens.access_token });
    expect(introspected.body).toEqual({ active: false });
  });

  it('a reused refresh token is invalid_grant and ends the grant', async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s);
    const rotated = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
    await expect(client.refreshTokenGrant(s.config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.refreshTokenGrant(s.config, rotated.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(client.fetchUserInfo(s.config, rotated.access_token, s.user._id)).rejects.toThrow();
  });

  const tokenEndpoint = (s: Setup, refreshToken: string) =>
    suite.t.http().post(`/oidc/${s.tenant.membershipId}/token`).auth(s.app.id, s.app.secret).type('form').send({ grant_type: 'refresh_token', refresh_token: refreshToken });

  /**
   * Runs `revoke` while a refresh of `refreshToken` is under way, then answers both: the refresh is
   * held at the end of its one statement, the record it refreshes already marked used and locked.
   */
  async function revokeWhileRefreshing(s: Setup, refreshToken: string, revoke: () => PromiseLike<Response>) {
    const [refreshed, revoked] = await overlapWithHeldStatement(suite.t, s.tenant.admin, 'TokenRefreshed', () => tokenEndpoint(s, refreshToken), revoke);
    return { refreshed, revoked };
  }

  // Server database only: PGlite runs one statement at a time, so two cannot overlap there.
  (serverUrl() ? it : it.skip)('a reuse that ends the grant while a refresh of it commits: what that refresh issued ends too', async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s);
    const rotated = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
    // The first refresh token again: a reuse, which ends the grant while the rotated one is refreshed.
    const { refreshed, revoked } = await revokeWhileRefreshing(s, rotated.refresh_token!, () => tokenEndpoint(s, tokens.refresh_token!));
    expect({ refreshed: refreshed.status, reused: revoked.status, error: revoked.body.error }).toEqual({ refreshed: 200, reused: 400, error: 'invalid_grant' });
    const issued = refreshed.body as { access_token: string; refresh_token: string };
    await expect(client.fetchUserInfo(s.config, issued.access_token, s.user._id)).rejects.toThrow();
    expect((await tokenEndpoint(s, issued.refresh_token)).body.error).toBe('invalid_grant');
  });

  (serverUrl() ? it : it.skip)('consent withdrawn while a refresh of its grant commits: what that refresh issued ends too', async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s);
    const own = await signIn(suite.t, s.tenant.membershipId, s.user.username, s.user.password);
    const withdraw = () => as(suite.t, own).del(`/memberships/${s.tenant.membershipId}/users/${s.user._id}/consents/${s.app.id}`);
    const { refreshed, revoked } = await revokeWhileRefreshing(s, tokens.refresh_token!, withdraw);
    expect({ refreshed: refreshed.status, withdrawn: revoked.status }).toEqual({ refreshed: 200, withdrawn: 204 });
    const issued = refreshed.body as { access_token: string; refresh_token: string };
    await expect(client.fetchUserInfo(s.config, issued.access_token, s.user._id)).rejects.toThrow();
    expect((await tokenEndpoint(s, issued.refresh_token)).body.error).toBe('invalid_grant');
  });

  (serverUrl() ? it : it.skip)('consent withdrawn while an authorization it covered makes its code: no code; consent is asked again', async () => {
    const s = await setup();
    await codeFlow(s);
    const own = await signIn(suite.t, s.tenant.membershipId, s.user.username, s.user.password);
    // Single sign-on and a remembered consent: /authorize checks the consent (the withdrawal has
    // not committed) and makes the code, which waits for the withdrawal (or, were it not to, is made).
    const request = await authorizationRequest(s);
    const [withdrawn, page] = await overlapWithHeldStatement(
      suite.t,
      s.tenant.admin,
      'OidcConsentRevoked',
      () => as(suite.t, own).del(`/memberships/${s.tenant.membershipId}/users/${s.user._id}/consents/${s.app.id}`),
      () => s.browser.follow(request.url.href, suite.t.url),
    );
    expect({ withdrawn: withdrawn.status, authorized: page.status }).toEqual({ withdrawn: 204, authorized: 200 });
    expect(page.location ?? '').not.toMatch(/[?&]code=/);
    expect(page.html).toContain('name="decision"');
  });

  it("withdrawing consent ends the client's grants to the user and its codes not yet exchanged; the user's sessions and other clients' grants go on", async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s);
    const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
    // A second client of the membership, consented to in the same browser.
    const otherApp = await createApplication(suite.t, s.tenant.admin, { oidc: { redirect_uris: [CALLBACK] } } as Record<string, unknown>);
    const otherConfig = await client.discovery(new URL(s.issuer), otherApp.id, otherApp.secret, undefined, { execute: [client.allowInsecureRequests] });
    const other = await codeFlow({ ...s, app: otherApp, config: otherConfig });
    // A code the first client has not exchanged yet (single sign-on, consent remembered).
    const pending = await authorizationRequest(s);
    const landed = await s.browser.follow(pending.url.href, suite.t.url);
    expect(landed.location).toMatch(/[?&]code=/);
    const own = await signIn(suite.t, s.tenant.membershipId, s.user.username, s.user.password);
    const consents = `/memberships/${s.tenant.membershipId}/users/${s.user._id}/consents`;

    await as(suite.t, own).del(`${consents}/${s.app.id}`).expect(204);
    await expect(client.fetchUserInfo(s.config, refreshed.access_token, s.user._id)).rejects.toThrow();
    await expect(client.refreshTokenGrant(s.config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(
      client.authorizationCodeGrant(s.config, new URL(landed.location!), { pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
    const revoked = await queryEvents(suite.t, s.tenant.admin, { event_type: 'TokenRevoked', 'document.reason': 'consent_revoked' });
    expect(revoked.map((event) => event.document)).toEqual([expect.objectContaining({ client_id: s.app.id, user_id: s.user._id, grant: 'refresh_token' })]);
    expect(revoked[0].utilizer_id).toBe(s.user._id);
    // The user's own session and the other client's grant go on.
    await as(suite.t, own).get('/whoami').expect(200);
    await client.fetchUserInfo(otherConfig, other.tokens.access_token, s.user._id);
    const otherRefreshed = await client.refreshTokenGrant(otherConfig, other.tokens.refresh_token!);

    // Withdrawing every consent ends the other client's grant as well.
    await as(suite.t, own).del(consents).expect(204);
    await expect(client.fetchUserInfo(otherConfig, otherRefreshed.access_token, s.user._id)).rejects.toThrow();
    await expect(client.refreshTokenGrant(otherConfig, otherRefreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await as(suite.t, own).get('/whoami').expect(200);
  });

  it('without offline_access no refresh token; the refresh grant is refused', async () => {
    const s = await setup({ require_consent: false });
    const { tokens } = await codeFlow(s, 'openid email');
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.claims()?.preferred_username).toBeUndefined();
  });

  it('OIDC access tokens are refused by the management API; userinfo answers invalid_token with a Bearer challenge', async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s);
    expectErrorBody(await as(suite.t, `Bearer ${tokens.access_token}`).get(`/memberships/${s.tenant.membershipId}/users/${s.user._id}`), 401, 'InvalidToken');
    const res = await suite.t.http().get(`/oidc/${s.tenant.membershipId}/userinfo`).set('Authorization', 'Bearer not-a-token');
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    // No credentials at all: RFC 6750 3.1's bare challenge, naming no error.
    const bare = await suite.t.http().get(`/oidc/${s.tenant.membershipId}/userinfo`);
    expect({ status: bare.status, challenge: bare.headers['www-authenticate'], error: bare.body.error }).toEqual({ status: 401, challenge: 'Bearer realm="portcullis"', error: 'invalid_token' });
  });

  it('userinfo by POST takes the access token in a form body (RFC 6750 2.2) as in the header; both at once, or repeated, is invalid_request', async () => {
    const s = await setup({ require_consent: false });
    const { tokens } = await codeFlow(s, 'openid email');
    const userinfo = `/oidc/${s.tenant.membershipId}/userinfo`;
    const inBody = await suite.t.http().post(userinfo).type('form').send({ access_token: tokens.access_token });
    expect({ status: inBody.status, body: inBody.body }).toEqual({ status: 200, body: { sub: s.user._id, email: s.user.email_address, email_verified: expect.any(Boolean) } });
    const inHeader = await suite.t.http().post(userinfo).set('Authorization', `Bearer ${tokens.access_token}`);
    expect(inHeader.body).toEqual(inBody.body);

    const both = await suite.t.http().post(userinfo).set('Authorization', `Bearer ${tokens.access_token}`).type('form').send({ access_token: tokens.access_token });
    const repeated = await suite.t.http().post(userinfo).type('form').send(`access_token=${tokens.access_token}&access_token=${tokens.access_token}`);
    for (const res of [both, repeated]) {
      expect({ status: res.status, error: res.body.error, challenge: res.headers['www-authenticate'] }).toEqual({
        status: 400,
        error: 'invalid_request',
        challenge: expect.stringMatching(/^Bearer error="invalid_request"/),
      });
    }
    // A body token is checked as a header's: a wrong one is invalid_token, and a revoked one too.
    const wrong = await suite.t.http().post(userinfo).type('form').send({ access_token: 'not-a-token' });
    expect({ status: wrong.status, error: wrong.body.error }).toEqual({ status: 401, error: 'invalid_token' });
    await client.tokenRevocation(s.config, tokens.access_token);
    const revoked = await suite.t.http().post(userinfo).type('form').send({ access_token: tokens.access_token });
    expect({ status: revoked.status, error: revoked.body.error }).toEqual({ status: 401, error: 'invalid_token' });
  });

  it("logout-all and freezing the user end single sign-on and the tokens issued in it", async () => {
    const s = await setup();
    const { tokens } = await codeFlow(s);
    const signedIn = await suite.t.http().post('/generate-token').set('X-Service-Alias', s.tenant.membershipId).send({ username: s.user.username, password: s.user.password });
    await suite.t.http().get('/revoke-token?logout-all=true').set('Authorization', `Bearer ${signedIn.body.access_token}`).expect(204);
    await expect(client.fetchUserInfo(s.config, tokens.access_token, s.user._id)).rejects.toThrow();
    const again = await s.browser.follow((await authorizationRequest(s)).url.href, suite.t.url);
    expect(again.html).toContain('name="password"');

    // Signed in again, then frozen by an administrator.
    const second = await codeFlow(s);
    await as(suite.t, s.tenant.admin).post(`/memberships/${s.tenant.membershipId}/users/${s.user._id}/freeze`).expect(200);
    await expect(client.fetchUserInfo(s.config, second.tokens.access_token, s.user._id)).rejects.toThrow();
    const afterFreeze = await s.browser.follow((await authorizationRequest(s)).url.href, suite.t.url);
    expect(afterFreeze.html).toContain('name="password"');
  });

  it('a public client (token_endpoint_auth_method none) runs the flow with PKCE alone', async () => {
    const s = await setup({ public: true, require_consent: false });
    const config = await client.discovery(new URL(s.issuer), s.app.id, undefined, client.None(), { execute: [client.allowInsecureRequests] });
    const { tokens } = await codeFlow({ ...s, config });
    expect(tokens.claims()?.sub).toBe(s.user._id);
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).toBeDefined();
  });

  it('key rotation: tokens signed before still verify; new tokens carry the new kid', async () => {
    const s = await setup({ require_consent: false });
    const before = await codeFlow(s);
    const rotated = await as(suite.t, s.tenant.admin).post(`/memberships/${s.tenant.membershipId}/signing-keys/rotate`, {});
    expect(rotated.status).toBeLessThan(300);
    const jwks = createRemoteJWKSet(new URL(`${s.issuer}/jwks`));
    const old = await jwtVerify(before.tokens.access_token, jwks, { issuer: s.issuer, typ: 'at+jwt' });
    expect(old.protectedHeader.kid).toBe(rotated.body.retired_kid);
    await client.fetchUserInfo(s.config, before.tokens.access_token, s.user._id);
    const after = await codeFlow(s);
    const fresh = await jwtVerify(after.tokens.access_token, jwks, { issuer: s.issuer, typ: 'at+jwt' });
    expect(fresh.protectedHeader.kid).toBe(rotated.body.kid);
  });
});
