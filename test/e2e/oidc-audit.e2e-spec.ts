import * as client from 'openid-client';
import { decodeJwt } from 'jose';
import { createApplication, createMembership, createUser, useInstallation } from '../support/api';
import { authorizationRequest } from '../support/oidc-authorization-request';
import { PageBrowser } from '../support/oidc-browser';

/*
 * Probes of an audit of the OpenID Provider against RFC 6749, RFC 6750, OpenID Connect Core 1.0 and
 * the OAuth 2.0 Security BCP, each a defect that was found and fixed (or a property that held).
 */
describe('OpenID Provider: audit', () => {
  const suite = useInstallation({ publicUrl: true });
  const CALLBACK = 'http://127.0.0.1:9/callback';

  async function setup(oidc: Record<string, unknown> = {}) {
    const tenant = await createMembership(suite.t, suite.admin);
    const app = await createApplication(suite.t, tenant.admin, { oidc: { redirect_uris: [CALLBACK], ...oidc } } as Record<string, unknown>);
    const user = await createUser(suite.t, tenant.admin, { firstname: 'Grace', lastname: 'Hopper' });
    const issuer = `${suite.t.url}/oidc/${tenant.membershipId}`;
    const config = await client.discovery(new URL(issuer), app.id, app.secret, undefined, { execute: [client.allowInsecureRequests] });
    return { tenant, app, user, issuer, config, browser: new PageBrowser() };
  }
  type Setup = Awaited<ReturnType<typeof setup>>;

  async function codeFlow(s: Setup, scope = 'openid profile email offline_access', extra: Record<string, string> = {}) {
    const { url, verifier, state, nonce } = await authorizationRequest(s.config, CALLBACK, scope, extra);
    let page = await s.browser.follow(url.href, suite.t.url);
    if (page.html.includes('name="password"')) page = await s.browser.submit(page, { username: s.user.username, password: s.user.password }, suite.t.url);
    if (page.html.includes('name="decision"')) page = await s.browser.submit(page, { decision: 'allow' }, suite.t.url);
    expect(page.status).toBe(303);
    return client.authorizationCodeGrant(s.config, new URL(page.location!), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  }

  const tokenPost = (s: Setup, form: Record<string, string>) =>
    fetch(`${s.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${s.app.id}:${s.app.secret}`).toString('base64')}` },
      body: new URLSearchParams(form).toString(),
    });

  it('RFC 6749 6: a refresh asking a narrower scope narrows the access token; the new refresh token keeps the scope granted', async () => {
    const s = await setup();
    const tokens = await codeFlow(s);
    const narrow = await tokenPost(s, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, scope: 'openid' });
    const narrowed = (await narrow.json()) as { scope: string; refresh_token: string; access_token: string; id_token: string };
    expect({ status: narrow.status, scope: narrowed.scope, claim: decodeJwt(narrowed.access_token).scope }).toEqual({ status: 200, scope: 'openid', claim: 'openid' });
    // The narrowed access token releases only what it carries, at userinfo and introspection.
    const info = await fetch(`${s.issuer}/userinfo`, { headers: { authorization: `Bearer ${narrowed.access_token}` } });
    expect(await info.json()).toEqual({ sub: s.user._id });
    const introspected = await fetch(`${s.issuer}/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${s.app.id}:${s.app.secret}`).toString('base64')}` },
      body: new URLSearchParams({ token: narrowed.access_token }).toString(),
    });
    expect(await introspected.json()).toMatchObject({ active: true, scope: 'openid' });
    // The next refresh without scope gets the scope originally granted (RFC 6749 6: omitted means the
    // scope "originally granted by the resource owner"; a new refresh token's scope is identical).
    const again = await tokenPost(s, { grant_type: 'refresh_token', refresh_token: narrowed.refresh_token });
    const body = (await again.json()) as { scope: string; refresh_token: string };
    expect({ status: again.status, scope: body.scope }).toEqual({ status: 200, scope: 'openid profile email offline_access' });
    // And asking for a scope of the grant after a narrowed refresh is no widening.
    const narrowAgain = (await (await tokenPost(s, { grant_type: 'refresh_token', refresh_token: body.refresh_token, scope: 'openid' })).json()) as { refresh_token: string };
    const asked = await tokenPost(s, { grant_type: 'refresh_token', refresh_token: narrowAgain.refresh_token, scope: 'openid email' });
    expect({ status: asked.status, scope: ((await asked.json()) as { scope: string }).scope }).toEqual({ status: 200, scope: 'openid email' });
  });

  it('RFC 8707: the resource of the authorization stays the audience of the access tokens its refreshes issue', async () => {
    const s = await setup();
    const API = 'https://api.example.com/';
    const tokens = await codeFlow(s, 'openid offline_access', { resource: API });
    expect(decodeJwt(tokens.access_token).aud).toBe(API);
    const refreshed = await client.refreshTokenGrant(s.config, tokens.refresh_token!);
    expect(decodeJwt(refreshed.access_token).aud).toBe(API);
    // The ID token stays the client's (OpenID Connect Core 2: aud is the client).
    expect(refreshed.claims()?.aud).toBe(s.app.id);
    const again = await client.refreshTokenGrant(s.config, refreshed.refresh_token!);
    expect(decodeJwt(again.access_token).aud).toBe(API);
  });

  it('OpenID Connect Core 5.3: userinfo refuses an access token without the openid scope (403 insufficient_scope)', async () => {
    const s = await setup();
    const tokens = await codeFlow(s);
    const narrow = await tokenPost(s, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, scope: 'profile offline_access' });
    const narrowed = (await narrow.json()) as { access_token: string };
    const res = await fetch(`${s.issuer}/userinfo`, { headers: { authorization: `Bearer ${narrowed.access_token}` } });
    const body = await res.text();
    expect({ status: res.status, body: JSON.parse(body) as unknown }).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*error="insufficient_scope"/);
  });
});
