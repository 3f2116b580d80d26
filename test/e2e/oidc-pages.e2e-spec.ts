import { randomUUID } from 'node:crypto';
import * as client from 'openid-client';
import { decodeJwt } from 'jose';
import { SigningKeys } from '../../src/oidc/signing-keys';
import { aroundPasswordCheck, as, createApplication, createMembership, createSignedInUser, createUser, eventsAbout, updateMembership, useInstallation } from '../support/api';
import { formAction, PageBrowser, type PageAnswer } from '../support/oidc-browser';
import { awayFromStepEdge, currentStep, totpAt } from '../support/totp';

/*
 * The OpenID Provider's front channel (contract "Single sign-on", "Sign-in defenses", "Second
 * factors"): every refusal of the authorization endpoint, the pages' headers, cookies and
 * escaping, the interaction cookie's binding, the sign-in defenses and the second factor on the
 * login page, prompt and max_age, and remembered consent with its routes.
 */
describe('OpenID Provider: authorization endpoint and pages', () => {
  const suite = useInstallation({ publicUrl: true });
  const CALLBACK = 'http://127.0.0.1:9/callback';
  const CSP = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'";

  async function setup(options: { oidc?: Record<string, unknown>; name?: string; membership?: Record<string, unknown> } = {}) {
    const tenant = await createMembership(suite.t, suite.admin);
    if (options.membership) await updateMembership(suite.t, tenant, options.membership);
    const app = await createApplication(suite.t, tenant.admin, {
      ...(options.name ? { name: options.name } : {}),
      oidc: { redirect_uris: [CALLBACK], ...options.oidc },
    } as Record<string, unknown>);
    const user = await createUser(suite.t, tenant.admin);
    const issuer = `${suite.t.url}/oidc/${tenant.membershipId}`;
    const config = await client.discovery(new URL(issuer), app.id, app.secret, undefined, { execute: [client.allowInsecureRequests] });
    return { tenant, app, user, issuer, config, browser: new PageBrowser() };
  }
  type Setup = Awaited<ReturnType<typeof setup>>;

  async function authorizeUrl(s: Setup, extra: Record<string, string> = {}) {
    const verifier = client.randomPKCECodeVerifier();
    return client.buildAuthorizationUrl(s.config, {
      redirect_uri: CALLBACK,
      scope: 'openid profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 'the-state',
      nonce: 'the-nonce',
      ...extra,
    });
  }

  /** A step's page also lets its form land at the client's redirect_uri origin (CSP 3 form-action covers redirects). */
  function expectPageHeaders(page: PageAnswer, formTarget?: string): void {
    expect(page.headers.get('content-security-policy')).toBe(formTarget ? CSP.replace("form-action 'self'", `form-action 'self' ${formTarget}`) : CSP);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.html).not.toMatch(/<script|\sstyle=|<style/i);
  }

  const redirectParams = (page: PageAnswer) => {
    expect(page.status).toBe(303);
    const url = new URL(page.location!);
    expect(`${url.origin}${url.pathname}`).toBe(CALLBACK);
    return Object.fromEntries(url.searchParams);
  };

  async function loginPage(s: Setup, extra: Record<string, string> = {}) {
    const page = await s.browser.follow((await authorizeUrl(s, extra)).href, suite.t.url);
    expect(page.status).toBe(200);
    expect(page.html).toContain('name="password"');
    return page;
  }

  it('an unknown client, a redirect_uri not registered, none at all: a 400 page, never a redirect', async () => {
    const s = await setup();
    const base = new URL(await authorizeUrl(s));
    const variants: [string, string | null][] = [
      ['client_id', '00000000-0000-4000-8000-000000000000'],
      ['redirect_uri', 'http://127.0.0.1:9/elsewhere'],
      ['redirect_uri', `${CALLBACK}/`],
      ['redirect_uri', null],
      ['client_id', null],
    ];
    for (const [name, value] of variants) {
      const url = new URL(base);
      if (value === null) url.searchParams.delete(name);
      else url.searchParams.set(name, value);
      const page = await s.browser.request(url.href);
      expect({ name, value, status: page.status, location: page.location }).toEqual({ name, value, status: 400, location: undefined });
      expectPageHeaders(page);
    }
    // An inactive application is no client either.
    const current = await as(suite.t, s.tenant.admin).get(`/memberships/${s.tenant.membershipId}/applications/${s.app.id}`).expect(200);
    const { name, description, role, permissions, forbidden, oidc } = current.body as Record<string, unknown>;
    await as(suite.t, s.tenant.admin)
      .put(`/memberships/${s.tenant.membershipId}/applications/${s.app.id}`, { name, description, role, permissions, forbidden, oidc, is_active: false })
      .expect(200);
    expect((await s.browser.request(base.href)).status).toBe(400);
  });

  it('refusals after the client is known go back to redirect_uri with error, state and iss', async () => {
    const s = await setup();
    const cases: [Record<string, string>, string[], string][] = [
      [{ response_type: 'token' }, [], 'unsupported_response_type'],
      [{ response_type: 'code id_token' }, [], 'unsupported_response_type'],
      [{}, ['code_challenge', 'code_challenge_method'], 'invalid_request'],
      [{ code_challenge_method: 'plain' }, [], 'invalid_request'],
      [{}, ['code_challenge_method'], 'invalid_request'],
      [{ scope: 'openid admin' }, [], 'invalid_scope'],
      [{ scope: 'profile' }, [], 'invalid_scope'],
      [{ prompt: 'none' }, [], 'login_required'],
      [{ response_mode: 'fragment' }, [], 'invalid_request'],
      [{ response_mode: 'form_post' }, [], 'invalid_request'],
    ];
    for (const [set, remove, error] of cases) {
      const url = new URL(await authorizeUrl(s));
      for (const [name, value] of Object.entries(set)) url.searchParams.set(name, value);
      for (const name of remove) url.searchParams.delete(name);
      const params = redirectParams(await s.browser.request(url.href));
      expect({ set, remove, error: params.error, state: params.state, iss: params.iss }).toEqual({ set, remove, error, state: 'the-state', iss: s.issuer });
      expect(params.code).toBeUndefined();
    }
    // A state past the parameter limit is refused, and not carried back.
    const long = new URL(await authorizeUrl(s));
    long.searchParams.set('state', 's'.repeat(5000));
    const refused = redirectParams(await s.browser.request(long.href));
    expect({ error: refused.error, description: refused.error_description, state: refused.state }).toEqual({
      error: 'invalid_request',
      description: 'state must be at most 2048 characters',
      state: undefined,
    });
  });

  it('the authorization endpoint takes POST too (OpenID Connect Core 3.1.2.1): the form-encoded parameters, answered as GET answers them', async () => {
    const s = await setup({ oidc: { require_consent: false } });
    const form = Object.fromEntries((await authorizeUrl(s)).searchParams);
    const started = await s.browser.request(`${s.issuer}/authorize`, { form });
    expect({ status: started.status, interaction: started.location?.startsWith(`${s.issuer}/interaction/`) }).toEqual({ status: 303, interaction: true });
    const page = await s.browser.follow(started.location!, suite.t.url);
    expect(page.html).toContain('name="password"');
    const done = redirectParams(await s.browser.submit(page, { username: s.user.username, password: s.user.password }, suite.t.url));
    expect({ code: typeof done.code, state: done.state, iss: done.iss }).toEqual({ code: 'string', state: 'the-state', iss: s.issuer });
    // Refusals as by GET: after the client is known back to redirect_uri, before it a 400 page.
    const refused = redirectParams(await s.browser.request(`${s.issuer}/authorize`, { form: { ...form, response_type: 'token' } }));
    expect({ error: refused.error, state: refused.state, iss: refused.iss }).toEqual({ error: 'unsupported_response_type', state: 'the-state', iss: s.issuer });
    const untrusted = await s.browser.request(`${s.issuer}/authorize`, { form: { ...form, redirect_uri: 'http://127.0.0.1:9/elsewhere' } });
    expect({ status: untrusted.status, location: untrusted.location }).toEqual({ status: 400, location: undefined });
  });

  it("id_token_hint (OpenID Connect Core 3.1.2.1): prompt=none for another user than the session's is login_required; a hint the issuer did not sign is invalid_request", async () => {
    const s = await setup({ oidc: { require_consent: false } });
    const signedIn = redirectParams(await s.browser.submit(await loginPage(s), { username: s.user.username, password: s.user.password }, suite.t.url));
    expect(signedIn.code).toBeDefined();
    const keys = suite.t.app.get(SigningKeys);
    const now = Math.floor(Date.now() / 1000);
    const idToken = (sub: string) => keys.sign(s.tenant.membershipId, { iss: s.issuer, sub, aud: s.app.id, iat: now, exp: now + 300 }, 'JWT');
    const mine = await idToken(s.user._id);
    const someoneElses = await idToken(randomUUID());
    expect(redirectParams(await s.browser.request((await authorizeUrl(s, { prompt: 'none', id_token_hint: mine })).href)).code).toBeDefined();
    const other = redirectParams(await s.browser.request((await authorizeUrl(s, { prompt: 'none', id_token_hint: someoneElses })).href));
    expect({ error: other.error, code: other.code, state: other.state, iss: other.iss }).toEqual({ error: 'login_required', code: undefined, state: 'the-state', iss: s.issuer });
    // Without prompt=none the session does not serve it either: the login page.
    expect((await s.browser.follow((await authorizeUrl(s, { id_token_hint: someoneElses })).href, suite.t.url)).html).toContain('name="password"');
    const [header, payload] = mine.split('.');
    const forged = redirectParams(await s.browser.request((await authorizeUrl(s, { prompt: 'none', id_token_hint: `${header}.${payload}.${Buffer.alloc(64, 1).toString('base64url')}` })).href));
    expect({ error: forged.error, code: forged.code }).toEqual({ error: 'invalid_request', code: undefined });
  });

  it('id_token_hint at the login page: another user signing in ends the request with login_required, no code and no session; the hinted user gets a code', async () => {
    const s = await setup({ oidc: { require_consent: false } });
    const other = await createUser(suite.t, s.tenant.admin);
    const keys = suite.t.app.get(SigningKeys);
    const now = Math.floor(Date.now() / 1000);
    const hint = await keys.sign(s.tenant.membershipId, { iss: s.issuer, sub: s.user._id, aud: s.app.id, iat: now, exp: now + 300 }, 'JWT');

    const refused = redirectParams(await s.browser.submit(await loginPage(s, { id_token_hint: hint }), { username: other.username, password: other.password }, suite.t.url));
    expect({ error: refused.error, code: refused.code, state: refused.state, iss: refused.iss }).toEqual({ error: 'login_required', code: undefined, state: 'the-state', iss: s.issuer });
    // The other user's sign-in opened no session here: the next request without a hint asks to sign in.
    expect(redirectParams(await s.browser.request((await authorizeUrl(s, { prompt: 'none' })).href)).error).toBe('login_required');

    const passed = redirectParams(await s.browser.submit(await loginPage(s, { id_token_hint: hint }), { username: s.user.username, password: s.user.password }, suite.t.url));
    expect(passed.code).toBeDefined();
  });

  it('pages: strict headers, escaped client names, cookies HttpOnly SameSite=Lax within the issuer, forms under <issuer>/interaction/', async () => {
    const name = '<script>alert(1)</script>';
    const s = await setup({ name });
    const first = await s.browser.request((await authorizeUrl(s)).href);
    expect(first.status).toBe(303);
    const cookieLine = first.headers.getSetCookie().find((line) => line.startsWith('portcullis_interaction='))!;
    expect(cookieLine).toMatch(/HttpOnly/);
    expect(cookieLine).toMatch(/SameSite=Lax/);
    expect(cookieLine).not.toMatch(/Secure/);
    expect(Number(/Max-Age=(\d+)/.exec(cookieLine)![1])).toBeLessThanOrEqual(600);
    expect(/Path=([^;]+)/.exec(cookieLine)![1]).toMatch(new RegExp(`^/oidc/${s.tenant.membershipId}/interaction/`));
    const page = await s.browser.request(first.location!);
    expectPageHeaders(page, 'http://127.0.0.1:9');
    expect(page.html).not.toContain(name);
    expect(page.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(formAction(page.html).startsWith(`${s.issuer}/interaction/`)).toBe(true);
    const css = await s.browser.request(`${s.issuer}/pages.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);

    const consent = await s.browser.submit(page, { username: s.user.username, password: s.user.password }, suite.t.url);
    expectPageHeaders(consent, 'http://127.0.0.1:9');
    expect(consent.html).toContain('&lt;script&gt;');
    expect(consent.html).not.toContain(name);
    const sso = [...s.browser.cookies.entries()].find(([key]) => key.startsWith('portcullis_sso\n'));
    expect(sso?.[1].path).toBe(`/oidc/${s.tenant.membershipId}`);
  });

  it('a post without the interaction cookie, or with another interaction\'s, signs no one in (4xx page)', async () => {
    const s = await setup();
    const page = await loginPage(s);
    const without = await s.browser.request(formAction(page.html), { form: { username: s.user.username, password: s.user.password }, withCookies: false });
    expect(without.status).toBeGreaterThanOrEqual(400);
    expect(without.status).toBeLessThan(500);
    expect(without.location).toBeUndefined();
    expect(without.headers.getSetCookie().some((line) => line.startsWith('portcullis_sso='))).toBe(false);

    const other = new PageBrowser();
    await other.follow((await authorizeUrl(s)).href, suite.t.url);
    const [, otherCookie] = [...other.cookies.entries()].find(([key]) => key.startsWith('portcullis_interaction\n'))!;
    const forged = await fetch(formAction(page.html), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `portcullis_interaction=${otherCookie.value}` },
      body: new URLSearchParams({ username: s.user.username, password: s.user.password }),
    });
    expect(forged.status).toBe(400);
    expect(forged.headers.get('location')).toBeNull();
  });

  it('a wrong password shows the form again with 400, never a redirect; the lock answers 429 with Retry-After', async () => {
    const s = await setup({ membership: { sign_in_policy: { max_failures: 2, window_seconds: 900, lock_seconds: 60 } } });
    const page = await loginPage(s);
    const wrong = await s.browser.submit(page, { username: s.user.username, password: 'not the password' }, suite.t.url);
    expect(wrong.status).toBe(400);
    expect(wrong.location).toBeUndefined();
    expect(wrong.html).toContain('name="password"');
    expectPageHeaders(wrong, 'http://127.0.0.1:9');
    await s.browser.submit(wrong, { username: s.user.username, password: 'still wrong' }, suite.t.url);
    const locked = await s.browser.submit(wrong, { username: s.user.username, password: s.user.password }, suite.t.url);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    // The same lock at /generate-token: one login, one count.
    const api = await suite.t.http().post('/generate-token').set('X-Service-Alias', s.tenant.membershipId).send({ username: s.user.username, password: s.user.password });
    expect(api.status).toBe(429);
  });

  describe('a login whose password was checked before a change to its user', () => {
    /** Submits the login form, holding the sign-in right after its password check until `meanwhile` has answered. */
    const submitAround = (s: Setup, page: PageAnswer, meanwhile: () => Promise<void>): Promise<PageAnswer> =>
      aroundPasswordCheck(suite.t, () => s.browser.submit(page, { username: s.user.username, password: s.user.password }, suite.t.url), meanwhile);

    it('its password changed meanwhile: the form again (400), no session and no code; the new password signs in', async () => {
      const s = await setup({ oidc: { require_consent: false } });
      const newPassword = 'changed while the form was checked';
      const page = await submitAround(s, await loginPage(s), async () => {
        expect((await as(suite.t, s.tenant.admin).put(`/memberships/${s.tenant.membershipId}/users/${s.user._id}/change-password`, { password: newPassword })).status).toBe(204);
      });
      expect({ status: page.status, location: page.location }).toEqual({ status: 400, location: undefined });
      expect(page.html).toContain('The username or password is not correct.');
      // No session: the single sign-on session's TokenGenerated names the user by user_id.
      expect(await eventsAbout(suite.t, s.tenant.membershipId, 'TokenGenerated', s.user._id)).toHaveLength(0);
      const done = await s.browser.submit(page, { username: s.user.username, password: newPassword }, suite.t.url);
      expect(redirectParams(done)).toMatchObject({ code: expect.any(String) });
    });

    it('its user deleted meanwhile: the form again (400), never a 500', async () => {
      const s = await setup({ oidc: { require_consent: false } });
      const page = await submitAround(s, await loginPage(s), async () => {
        expect((await as(suite.t, s.tenant.admin).del(`/memberships/${s.tenant.membershipId}/users/${s.user._id}`)).status).toBe(204);
      });
      expect({ status: page.status, location: page.location }).toEqual({ status: 400, location: undefined });
    });
  });

  it('deny: back to the client with access_denied, state and iss', async () => {
    const s = await setup();
    const consent = await s.browser.submit(await loginPage(s), { username: s.user.username, password: s.user.password }, suite.t.url);
    expect(consent.html).toContain('name="decision"');
    const params = redirectParams(await s.browser.submit(consent, { decision: 'deny' }, suite.t.url));
    expect(params).toMatchObject({ error: 'access_denied', state: 'the-state', iss: s.issuer });
  });

  it('prompt=none: consent_required with a session but no consent; prompt=login and max_age=0 ask the password again', async () => {
    const s = await setup();
    await s.browser.submit(await loginPage(s), { username: s.user.username, password: s.user.password }, suite.t.url);
    expect(redirectParams(await s.browser.request((await authorizeUrl(s, { prompt: 'none' })).href)).error).toBe('consent_required');
    const consent = await s.browser.follow((await authorizeUrl(s)).href, suite.t.url);
    const allowed = await s.browser.submit(consent, { decision: 'allow' }, suite.t.url);
    expect(redirectParams(allowed).code).toBeDefined();
    expect(redirectParams(await s.browser.request((await authorizeUrl(s, { prompt: 'none' })).href)).code).toBeDefined();
    expect((await s.browser.follow((await authorizeUrl(s, { prompt: 'login' })).href, suite.t.url)).html).toContain('name="password"');
    expect((await s.browser.follow((await authorizeUrl(s, { max_age: '0' })).href, suite.t.url)).html).toContain('name="password"');
    // A wider scope than consented asks again.
    expect((await s.browser.follow((await authorizeUrl(s, { scope: 'openid profile email' })).href, suite.t.url)).html).toContain('name="decision"');
  });

  it('the Host header is never used: redirects and forms name PUBLIC_URL', async () => {
    const s = await setup();
    const url = await authorizeUrl(s);
    const res = await suite.t.http().get(`${url.pathname}${url.search}`).set('Host', 'evil.example').set('X-Forwarded-Host', 'evil.example');
    expect(res.status).toBe(303);
    expect(res.headers.location.startsWith(`${s.issuer}/interaction/`)).toBe(true);
    const page = await suite.t.http().get(new URL(res.headers.location).pathname).set('Host', 'evil.example').set('Cookie', res.headers['set-cookie'][0].split(';')[0]);
    expect(formAction(page.text).startsWith(s.issuer)).toBe(true);
    expect(page.text).not.toContain('evil.example');
  });

  it('a user with TOTP gets the second factor page: a wrong code is 400 and counts, the right code signs in with amr otp+mfa', async () => {
    const s = await setup({ oidc: { require_consent: false } });
    await awayFromStepEdge();
    const { user, session } = await createSignedInUser(suite.t, s.tenant.admin);
    const call = as(suite.t, session);
    const started = await call.post(`/memberships/${s.tenant.membershipId}/users/${user._id}/mfa/totp`, { current_password: user.password });
    const secret = started.body.secret as string;
    await call.post(`/memberships/${s.tenant.membershipId}/users/${user._id}/mfa/totp/confirm`, { code: totpAt(secret, currentStep() - 1) }).expect(200);

    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(s.config, {
      redirect_uri: CALLBACK, scope: 'openid', code_challenge: await client.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 'st',
    });
    const login = await s.browser.follow(url.href, suite.t.url);
    const factor = await s.browser.submit(login, { username: user.username, password: user.password }, suite.t.url);
    expect(factor.status).toBe(200);
    expect(factor.html).toContain('name="code"');
    expect(s.browser.cookies.size).toBe(1); // no single sign-on session before the factor
    const wrong = await s.browser.submit(factor, { code: totpAt(secret, currentStep() + 5) }, suite.t.url);
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('name="code"');
    // As people type it, with a space, as the API's second step takes it.
    const code = totpAt(secret, currentStep());
    const done = await s.browser.submit(factor, { code: `${code.slice(0, 3)} ${code.slice(3)}` }, suite.t.url);
    expect(done.status).toBe(303);
    const tokens = await client.authorizationCodeGrant(s.config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: 'st' });
    expect(decodeJwt(tokens.id_token!).amr).toEqual(['pwd', 'otp', 'mfa']);
  });

  it("mfa_policy required and no factor: a page saying to enroll first, no session", async () => {
    const s = await setup({ membership: { mfa_policy: 'required' } });
    const page = await s.browser.submit(await loginPage(s), { username: s.user.username, password: s.user.password }, suite.t.url);
    expect(page.status).toBe(403);
    expect(page.html).toMatch(/second factor/i);
    expect([...s.browser.cookies.keys()].some((key) => key.startsWith('portcullis_sso'))).toBe(false);
  });

  it('remembered consent: listed, read, forgotten (events); the next authorization asks again; others need the permission', async () => {
    const s = await setup();
    const { user, session } = await createSignedInUser(suite.t, s.tenant.admin);
    const consent = await s.browser.submit(await loginPage(s), { username: user.username, password: user.password }, suite.t.url);
    await s.browser.submit(consent, { decision: 'allow' }, suite.t.url);
    const base = `/memberships/${s.tenant.membershipId}/users/${user._id}/consents`;
    const listed = await as(suite.t, session).get(base).expect(200);
    expect(listed.body).toEqual([{ client_id: s.app.id, scopes: ['openid', 'profile'], created_at: expect.any(String), updated_at: expect.any(String) }]);
    await as(suite.t, session).get(`${base}/${s.app.id}`).expect(200);
    const stranger = await createSignedInUser(suite.t, s.tenant.admin);
    expect((await as(suite.t, stranger.session).get(base)).status).toBe(403);
    expect((await as(suite.t, stranger.session).del(`${base}/${s.app.id}`)).status).toBe(403);
    await as(suite.t, s.tenant.admin).get(base).expect(200);
    await as(suite.t, session).del(`${base}/${s.app.id}`).expect(204);
    expect((await as(suite.t, session).del(`${base}/${s.app.id}`)).status).toBe(404);
    expect((await eventsAbout(suite.t, s.tenant.membershipId, 'OidcConsentGranted', user._id)).length).toBe(1);
    expect((await eventsAbout(suite.t, s.tenant.membershipId, 'OidcConsentRevoked', user._id)).length).toBe(1);
    expect((await s.browser.follow((await authorizeUrl(s)).href, suite.t.url)).html).toContain('name="decision"');
  });

  it('require_consent false: no consent page', async () => {
    const s = await setup({ oidc: { require_consent: false } });
    const done = await s.browser.submit(await loginPage(s), { username: s.user.username, password: s.user.password }, suite.t.url);
    expect(redirectParams(done)).toMatchObject({ state: 'the-state', iss: s.issuer, code: expect.any(String) });
  });
});
