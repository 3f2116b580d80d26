import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CDPSession, Page } from 'playwright-core';
import { as, createSignedInUser, expectErrorBody, queryEvents, setupInstallation, type Installation } from '../support/api';
import { startTestApp, type TestApp } from '../support/app';
import { describeWithBrowser, useBrowser } from '../support/browser';

jest.setTimeout(180_000);

/** @simplewebauthn/browser's own bundle: the page runs what a real front end would. */
const BROWSER_LIBRARY = readFileSync(join(__dirname, '..', '..', 'node_modules', '@simplewebauthn', 'browser', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>passkeys</title><script src="/simplewebauthn.js"></script></head><body>passkeys</body></html>`;

/** The relying party's page on loopback, at http://localhost:<port> (WebAuthn needs a host name, not an IP literal). */
async function startRelyingPartyPage(): Promise<{ server: Server; origin: string }> {
  const server = createServer((request, response) => {
    if (request.url === '/simplewebauthn.js') {
      response.writeHead(200, { 'Content-Type': 'text/javascript' }).end(BROWSER_LIBRARY);
      return;
    }
    response.writeHead(200, { 'Content-Type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://localhost:${(server.address() as AddressInfo).port}` };
}

type Json = Record<string, unknown>;
const claimsOf = (token: string): Json => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

describeWithBrowser('passkeys as a second factor, in headless Chromium with a virtual authenticator', () => {
  const browser = useBrowser();
  let relyingParty: { server: Server; origin: string };
  let t: TestApp;
  let inst: Installation;
  let page: Page;
  let cdp: CDPSession;
  let authenticatorId: string;
  const offLoopback: string[] = [];

  beforeAll(async () => {
    relyingParty = await startRelyingPartyPage();
    t = await startTestApp({ env: { WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: relyingParty.origin } });
    inst = await setupInstallation(t);
    page = await browser.newPage();
    // Nothing leaves the machine: the page may reach its own loopback server only.
    await page.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if (url.hostname === 'localhost' || url.hostname === '127.0.0.1') return route.continue();
      offLoopback.push(url.href);
      return route.abort();
    });
    await page.goto(relyingParty.origin);
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const added = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    authenticatorId = added.authenticatorId;
  });
  afterAll(async () => {
    await page?.close();
    await t?.close();
    await new Promise((resolve) => relyingParty?.server.close(resolve));
  });

  const register = (optionsJSON: Json): Promise<Json> =>
    page.evaluate(async (options) => (globalThis as unknown as { SimpleWebAuthnBrowser: { startRegistration: (a: object) => Promise<Json> } }).SimpleWebAuthnBrowser.startRegistration({ optionsJSON: options }), optionsJSON);
  const authenticate = (optionsJSON: Json): Promise<Json> =>
    page.evaluate(async (options) => (globalThis as unknown as { SimpleWebAuthnBrowser: { startAuthentication: (a: object) => Promise<Json> } }).SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: options }), optionsJSON);

  it('registers a passkey, signs in with it (amr hwk), refuses replays and a counter that went back, and removes it', async () => {
    const { user, session } = await createSignedInUser(t, inst.admin);
    const m = inst.admin.membershipId;
    const mfa = `/memberships/${m}/users/${user._id}/mfa`;
    const call = as(t, session);

    expectErrorBody(await call.post(`${mfa}/webauthn/options`, {}), 400, 'ModelValidationError');
    const options = await call.post(`${mfa}/webauthn/options`, { current_password: user.password });
    expect(options.status).toBe(200);
    expect(options.body).toMatchObject({ rp: { id: 'localhost' }, attestation: 'none', user: { name: user.username } });
    // 32 random bytes, base64url.
    expect(Buffer.from(options.body.challenge, 'base64url')).toHaveLength(32);

    const registration = await register(options.body);
    const registered = await call.post(`${mfa}/webauthn`, { name: 'Virtual key', response: registration });
    expect(registered.status).toBe(201);
    expect(registered.body).toEqual({ _id: expect.any(String), name: 'Virtual key', created_at: expect.any(String) });
    // The challenge was single use: the same response again is refused.
    expectErrorBody(await call.post(`${mfa}/webauthn`, { name: 'Again', response: registration }), 400, 'MfaCodeInvalid');
    // A response that is not one at all: 400, never a 500.
    expectErrorBody(await call.post(`${mfa}/webauthn`, { name: 'Junk', response: { id: 'x', response: { clientDataJSON: '!!' } } }), 400, 'MfaCodeInvalid');
    const state = await call.get(mfa);
    expect(state.body).toEqual({
      totp: { enabled: false },
      webauthn: [{ _id: registered.body._id, name: 'Virtual key', created_at: expect.any(String), last_used_at: null }],
      recovery_codes_left: 0,
    });

    const signIn = async () => {
      const first = await t.http().post('/generate-token').set('X-Service-Alias', m).send({ username: user.username, password: user.password });
      expect({ status: first.status, code: first.body.errorCode, methods: first.body.mfa_methods }).toEqual({ status: 401, code: 'MfaRequired', methods: ['webauthn'] });
      const assertionOptions = await t.http().post('/generate-token/mfa/webauthn-options').send({ mfa_token: first.body.mfa_token });
      expect(assertionOptions.status).toBe(200);
      expect(assertionOptions.body.allowCredentials).toHaveLength(1);
      return { mfaToken: first.body.mfa_token as string, options: assertionOptions.body as Json };
    };

    const one = await signIn();
    const assertion = await authenticate(one.options);
    const done = await t.http().post('/generate-token/mfa').send({ mfa_token: one.mfaToken, webauthn: assertion });
    expect(done.status).toBe(201);
    expect(claimsOf(done.body.access_token as string).amr).toEqual(['pwd', 'hwk', 'mfa']);
    expect((await call.get(mfa)).body.webauthn[0].last_used_at).toEqual(expect.any(String));

    // The same assertion on another sign-in: its challenge is not that sign-in's.
    const two = await signIn();
    expectErrorBody(await t.http().post('/generate-token/mfa').send({ mfa_token: two.mfaToken, webauthn: assertion }), 400, 'MfaCodeInvalid');

    // A cloned authenticator: the same key with its signature counter set back is refused.
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0].signCount).toBeGreaterThan(0);
    await cdp.send('WebAuthn.removeCredential', { authenticatorId, credentialId: credentials[0].credentialId });
    await cdp.send('WebAuthn.addCredential', { authenticatorId, credential: { ...credentials[0], signCount: 0 } });
    const three = await signIn();
    const cloned = await authenticate(three.options);
    expectErrorBody(await t.http().post('/generate-token/mfa').send({ mfa_token: three.mfaToken, webauthn: cloned }), 400, 'MfaCodeInvalid');

    // Removal with the current password; then the password alone signs in.
    expectErrorBody(await call.del(`${mfa}/webauthn/${registered.body._id}`, {}), 400, 'ModelValidationError');
    expect((await call.del(`${mfa}/webauthn/${registered.body._id}`, { current_password: user.password })).status).toBe(204);
    expect((await t.http().post('/generate-token').set('X-Service-Alias', m).send({ username: user.username, password: user.password })).status).toBe(201);
    const events = await queryEvents(t, inst.admin, { 'document.user_id': user._id, event_type: { $in: ['UserMfaEnabled', 'UserMfaDisabled'] } });
    expect(events.map((e) => [e.event_type, e.document])).toEqual(
      expect.arrayContaining([
        ['UserMfaEnabled', { user_id: user._id, method: 'webauthn' }],
        ['UserMfaDisabled', { user_id: user._id, method: 'webauthn' }],
      ]),
    );
    // No challenge in any event.
    expect(JSON.stringify(await queryEvents(t, inst.admin, {}, { limit: '1000' }))).not.toContain(options.body.challenge);
    expect(offLoopback).toEqual([]);
  });

  it('refuses a registration made on an origin that WEBAUTHN_ORIGINS does not list', async () => {
    const other = await startRelyingPartyPage();
    try {
      const { user, session } = await createSignedInUser(t, inst.admin);
      const mfa = `/memberships/${inst.admin.membershipId}/users/${user._id}/mfa`;
      const options = await as(t, session).post(`${mfa}/webauthn/options`, { current_password: user.password });
      await page.goto(other.origin);
      const registration = await register(options.body);
      expectErrorBody(await as(t, session).post(`${mfa}/webauthn`, { name: 'Elsewhere', response: registration }), 400, 'MfaCodeInvalid');
    } finally {
      await page.goto(relyingParty.origin);
      await new Promise((resolve) => other.server.close(resolve));
    }
  });
});
