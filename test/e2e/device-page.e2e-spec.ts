import { join } from 'node:path';
import { createSignedInUser, useInstallation } from '../support/api';
import { describeWithBrowser, loopbackPage, useBrowser } from '../support/browser';

/** Set (to anything) to rewrite the screenshot in docs/. */
const SCREENSHOT = process.env.DEVICE_PAGE_SCREENSHOT ? join(__dirname, '..', '..', 'docs', 'device-approval-page.png') : undefined;
const HOSTILE_NAME = '<img src=x onerror=alert(1)>';

jest.setTimeout(180_000);

describeWithBrowser('the /device approval page in headless Chromium', () => {
  const suite = useInstallation();
  const browser = useBrowser();

  it('signs in, shows the hostile client_info as text, approves, and the polling device gets its pair', async () => {
    const { user } = await createSignedInUser(suite.t, suite.inst.admin, { permissions: ['users.read'] });
    const m = suite.inst.admin.membershipId;
    const created = await suite.t.http().post(`/memberships/${m}/codes`).send({ client_info: { name: HOSTILE_NAME, model: 'Example TV 5' } });
    expect(created.status).toBe(201);
    const { device_code: deviceCode, user_code: userCode } = created.body as { device_code: string; user_code: string };
    const pending = await suite.t.http().post(`/memberships/${m}/codes/token`).send({ device_code: deviceCode });
    expect(pending.body.errorCode).toBe('AuthorizationPending');

    const { page, offLoopback, dialogs } = await loopbackPage(browser, { width: 800, height: 760 });
    await page.goto(`${suite.t.url}/device?membership_id=${m}&user_code=${userCode}`);
    await page.fill('#username', user.username);
    await page.fill('#password', user.password);
    await page.click('#sign-in button[type=submit]');
    await page.locator('#enter-code').waitFor({ state: 'visible' });
    expect(await page.inputValue('#user-code')).toBe(userCode);
    await page.click('#enter-code button[type=submit]');
    await page.locator('#decide').waitFor({ state: 'visible' });

    // The hostile name is shown as its text; no element was made from it, no script ran.
    expect(await page.locator('#client-info dd').allTextContents()).toEqual([HOSTILE_NAME, 'Example TV 5']);
    expect(await page.locator('#client-info img').count()).toBe(0);
    expect(await page.textContent('#shown-code')).toBe(userCode);
    if (SCREENSHOT) await page.screenshot({ path: SCREENSHOT, fullPage: true });

    await page.click('#approve');
    await page.locator('#status', { hasText: 'Approved' }).waitFor();

    const pair = await suite.t.http().post(`/memberships/${m}/codes/token`).send({ device_code: deviceCode });
    expect(pair.status).toBe(201);
    const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${pair.body.access_token as string}`);
    expect({ status: me.status, username: me.body.username }).toEqual({ status: 200, username: user.username });
    expect(dialogs).toEqual([]);
    expect(offLoopback).toEqual([]);
    await page.close();
  });

  it('is served with a CSP that allows no inline script', async () => {
    const res = await suite.t.http().get('/device');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).not.toContain('unsafe-inline');
  });
});
