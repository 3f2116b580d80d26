import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { createApplication, createMembership, createUser, useInstallation } from '../support/api';
import { describeWithBrowser, loopbackPage, useBrowser } from '../support/browser';
import { useStarted } from '../support/use-started';

/** A tiny relying party callback on 127.0.0.1: it records where the browser landed. */
async function startReceiver(): Promise<{ server: Server; url: string; landed: URL[] }> {
  const landed: URL[] = [];
  const server = createServer((request, response) => {
    landed.push(new URL(request.url ?? '/', 'http://127.0.0.1'));
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Signed in</title><p>Back at the application.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, landed };
}

/*
 * The pages once in a real browser (contract "Single sign-on": "the pages also in headless
 * Chromium"): sign in, consent, land on the application's redirect_uri with a code that
 * openid-client exchanges. The application's name is hostile: no script may run.
 */
describeWithBrowser('OpenID Provider pages in headless Chromium', () => {
  // One second between device polls, so that openid-client's loop is quick.
  const suite = useInstallation({ publicUrl: true, env: { DEVICE_POLL_INTERVAL_SECONDS: '1' } });
  const browser = useBrowser();
  const receiver = useStarted('the callback receiver', startReceiver, ({ server }) => new Promise<void>((resolve) => server.close(() => resolve())));

  it('signs in and consents in Chromium, then lands on the redirect_uri; openid-client exchanges the code', async () => {
    const tenant = await createMembership(suite.t, suite.admin);
    const callback = `${receiver.url}/callback`;
    const app = await createApplication(suite.t, tenant.admin, { name: '<script>alert(1)</script>', oidc: { redirect_uris: [callback] } } as Record<string, unknown>);
    const user = await createUser(suite.t, tenant.admin);
    const issuer = `${suite.t.url}/oidc/${tenant.membershipId}`;
    const config = await client.discovery(new URL(issuer), app.id, app.secret, undefined, { execute: [client.allowInsecureRequests] });
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: callback,
      scope: 'openid profile email',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });

    const { page, offLoopback, dialogs } = await loopbackPage(browser, { width: 1024, height: 800 });
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(url.href);
    await page.fill('#username', user.username);
    await page.fill('#password', user.password);
    await Promise.all([page.waitForURL(/\/interaction\//), page.click('button[type=submit]')]);
    await page.waitForSelector('button[value=allow]');
    expect(await page.textContent('main')).toContain('<script>alert(1)</script>');
    await Promise.all([page.waitForURL((landedAt) => landedAt.href.startsWith(callback)), page.click('button[value=allow]')]);
    expect(await page.textContent('body')).toContain('Back at the application');
    await page.close();

    expect(dialogs).toEqual([]);
    expect(offLoopback).toEqual([]);
    expect(violations).toEqual([]);
    const landed = receiver.landed.at(-1)!;
    expect(landed.searchParams.get('state')).toBe(state);
    expect(landed.searchParams.get('iss')).toBe(issuer);
    const tokens = await client.authorizationCodeGrant(config, new URL(`${callback}${landed.search}`), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()?.sub).toBe(user._id);
  });

  it("openid-client's device flow (RFC 8628), approved by the user on the /device page in Chromium", async () => {
    const tenant = await createMembership(suite.t, suite.admin);
    const app = await createApplication(suite.t, tenant.admin, {
      name: '<img src=x onerror=alert(1)>',
      oidc: { redirect_uris: ['http://127.0.0.1:9/callback'], grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] },
    } as Record<string, unknown>);
    const user = await createUser(suite.t, tenant.admin);
    const issuer = `${suite.t.url}/oidc/${tenant.membershipId}`;
    const config = await client.discovery(new URL(issuer), app.id, app.secret, undefined, { execute: [client.allowInsecureRequests] });
    const authorization = await client.initiateDeviceAuthorization(config, { scope: 'openid profile' });
    const polling = client.pollDeviceAuthorizationGrant(config, authorization);

    // The user opens verification_uri_complete, signs in, confirms the code and approves.
    const { page, offLoopback, dialogs } = await loopbackPage(browser, { width: 800, height: 760 });
    await page.goto(authorization.verification_uri_complete as string);
    await page.fill('#username', user.username);
    await page.fill('#password', user.password);
    await page.click('#sign-in button[type=submit]');
    await page.locator('#enter-code').waitFor({ state: 'visible' });
    expect(await page.inputValue('#user-code')).toBe(authorization.user_code);
    await page.click('#enter-code button[type=submit]');
    await page.locator('#decide').waitFor({ state: 'visible' });
    // The application's hostile name is shown as its text, beside the client and the scope asked.
    expect(await page.locator('#client-info dd').allTextContents()).toEqual(expect.arrayContaining(['<img src=x onerror=alert(1)>', app.id]));
    expect(await page.locator('#client-info img').count()).toBe(0);
    await page.click('#approve');
    await page.locator('#status', { hasText: 'Approved' }).waitFor();
    await page.close();
    expect(dialogs).toEqual([]);
    expect(offLoopback).toEqual([]);

    const tokens = await polling;
    expect(tokens.claims()).toMatchObject({ sub: user._id, iss: issuer, aud: app.id });
    expect(await client.fetchUserInfo(config, tokens.access_token, user._id)).toMatchObject({ sub: user._id, preferred_username: user.username });
  });
});
