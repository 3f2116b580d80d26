/**
 * `npm run example:nest` and `npm run example:express` as a developer runs them: the real npm
 * script, with only the environment variables the README lists. Without HOST they bind to
 * 127.0.0.1 (a development example stays off the network), and they answer on it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createApplication, createMembership, createUser, type SignedIn, useInstallation } from '../support/api';
import type { TestApp } from '../support/app';
import { describeWithBrowser, loopbackPage, useBrowser } from '../support/browser';
import { PageBrowser } from '../support/oidc-browser';
import { closedPort } from '../support/ports';

const ROOT = join(__dirname, '..', '..');

interface Started {
  child: ChildProcess;
  address: string;
  port: number;
}

/**
 * Runs `npm run <script>` in its own process group and waits for its "on http://<address>:<port>"
 * line. `env` replaces the protected APIs' settings.
 */
function startExample(script: string, env?: Record<string, string>): Promise<Started> {
  const child = spawn('npm', ['run', '--silent', script], {
    cwd: ROOT,
    detached: true,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      ...(env ?? {
        // Validated at start but never called: /health is public. A closed loopback port.
        PORTCULLIS_URL: 'http://127.0.0.1:9/',
        PORTCULLIS_MEMBERSHIP_ID: 'm-example',
      }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = / on http:\/\/(\S+):(\d+)/.exec(output);
      if (match) resolve({ child, address: match[1], port: Number(match[2]) });
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.on('exit', (code) => reject(new Error(`${script} exited (${code}) before listening:\n${output}`)));
  });
}

/** npm starts tsx, which starts node: end the whole process group. */
async function stop(started: Started | undefined): Promise<void> {
  if (!started?.child.pid || started.child.exitCode !== null) return;
  const exited = new Promise((resolve) => started.child.on('exit', resolve));
  process.kill(-started.child.pid, 'SIGTERM');
  await exited;
}

/** Whether any process of the group still runs (signal 0 tests without signalling). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

describe.each(['example:nest', 'example:express'])('npm run %s', (script) => {
  let started: Started | undefined;
  afterAll(() => stop(started));

  it('binds to 127.0.0.1 without HOST and answers there', async () => {
    started = await startExample(script);
    expect(started.address).toBe('127.0.0.1');
    const res = await fetch(`http://127.0.0.1:${started.port}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  }, 60_000);

  it('`kill <pid of npm>` stops the example with it: no child (tsx, node) keeps running or listening', async () => {
    if (!started?.child.pid) throw new Error('the example did not start');
    const { child, port } = started;
    const pgid = child.pid as number;
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM'); // npm alone, as `kill <pid>` does; not the group
    await exited;
    for (let waited = 0; groupAlive(pgid) && waited < 10_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(groupAlive(pgid)).toBe(false);
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  }, 30_000);
});

/** The sign-in examples this file started: each suite stops them after it. */
const signInExamples: Started[] = [];

async function stopSignInExamples(): Promise<void> {
  for (const started of signInExamples.splice(0)) await stop(started);
}

/**
 * A membership with an application for the example (its callback and signed-out page registered)
 * and a user, then `npm run example:sign-in` with only the variables the README sets.
 */
async function startSignInExample(t: TestApp, admin: SignedIn, applicationName: string, names: { firstname: string; lastname: string }) {
  const port = await closedPort();
  const appUrl = `http://127.0.0.1:${port}`;
  const tenant = await createMembership(t, admin);
  const client = await createApplication(t, tenant.admin, {
    name: applicationName,
    oidc: { redirect_uris: [`${appUrl}/callback`], post_logout_redirect_uris: [`${appUrl}/`] },
  } as Record<string, unknown>);
  const user = await createUser(t, tenant.admin, names);
  signInExamples.push(
    await startExample('example:sign-in', {
      PORT: String(port),
      PORTCULLIS_ISSUER: `${t.url}/oidc/${tenant.membershipId}`,
      CLIENT_ID: client.id,
      CLIENT_SECRET: client.secret,
    }),
  );
  return { appUrl, tenant, user };
}

/*
 * `npm run example:sign-in` as the README runs it: an Express app that signs its users in with
 * openid-client against the service's OpenID Provider. A browser-like client (cookies, redirects,
 * the pages' forms) goes from the app's sign-in link through the login and consent pages back to
 * the app, which then shows who signed in; sign-out ends the single sign-on session too.
 */
describe('npm run example:sign-in', () => {
  const suite = useInstallation({ publicUrl: true });
  afterAll(stopSignInExamples);

  it('signs a user in end to end, and out again', async () => {
    const { appUrl, tenant, user } = await startSignInExample(suite.t, suite.admin, 'Example web app', { firstname: 'Grace', lastname: 'Hopper' });
    const browser = new PageBrowser();
    expect((await browser.request(`${appUrl}/`)).html).toContain('Not signed in');

    // The app's sign-in link leads to the provider's login page, then consent, then back.
    const toProvider = await browser.request(`${appUrl}/login`);
    expect(toProvider.location).toMatch(new RegExp(`^${suite.t.url}/oidc/${tenant.membershipId}/authorize\\?`));
    let page = await browser.follow(toProvider.location as string, suite.t.url);
    expect(page.html).toContain('name="password"');
    page = await browser.submit(page, { username: user.username, password: user.password }, suite.t.url);
    expect(page.html).toContain('Example web app');
    page = await browser.submit(page, { decision: 'allow' }, suite.t.url);
    expect(page.location).toMatch(new RegExp(`^${appUrl}/callback\\?code=`));
    const back = await browser.request(page.location as string);
    expect(back.status).toBe(302);
    const home = await browser.request(`${appUrl}/`);
    expect(home.html).toContain('Signed in as <span id="user">Grace Hopper</span>');
    expect(home.html).toContain(user.email_address);

    // Sign-out: the app sends the browser to the provider's end-session endpoint, which comes back.
    const out = await browser.request(`${appUrl}/logout`);
    expect(out.location).toMatch(new RegExp(`^${suite.t.url}/oidc/${tenant.membershipId}/logout\\?`));
    const ended = await browser.request(out.location as string);
    expect(ended.location).toBe(`${appUrl}/`);
    expect((await browser.request(`${appUrl}/`)).html).toContain('Not signed in');
    // The single sign-on session is over: signing in again asks for the password.
    const again = await browser.follow((await browser.request(`${appUrl}/login`)).location as string, suite.t.url);
    expect(again.html).toContain('name="password"');
  }, 120_000);
});

/*
 * The same app once in a real browser (issue 37: "the pages also once in headless Chromium"):
 * Chromium follows the app's sign-in link, signs in and consents on the provider's pages, and
 * lands on the app's callback, which shows who signed in. The application's name is hostile: no
 * script may run, no request may leave loopback.
 */
describeWithBrowser('npm run example:sign-in in headless Chromium', () => {
  const suite = useInstallation({ publicUrl: true });
  const chromium = useBrowser();
  afterAll(stopSignInExamples);

  it('signs in and consents on the pages, lands on the app\'s callback, and the app shows the user', async () => {
    const { appUrl, user } = await startSignInExample(suite.t, suite.admin, '<img src=x onerror=alert(1)> Example', { firstname: 'Ada', lastname: 'Lovelace' });

    const { page, offLoopback, dialogs } = await loopbackPage(chromium, { width: 1024, height: 800 });
    await page.goto(`${appUrl}/login`);
    await page.waitForURL(/\/interaction\//);
    await page.fill('#username', user.username);
    await page.fill('#password', user.password);
    await Promise.all([page.waitForSelector('button[value=allow]'), page.click('button[type=submit]')]);
    expect(await page.textContent('main')).toContain('<img src=x onerror=alert(1)> Example');
    // Consent: the provider sends the browser to the app's callback, which redirects to its home page.
    const callbacks: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${appUrl}/callback`)) callbacks.push(request.url());
    });
    await Promise.all([page.waitForURL(`${appUrl}/`), page.click('button[value=allow]')]);
    expect(callbacks).toEqual([expect.stringMatching(new RegExp(`^${appUrl}/callback\\?code=`))]);
    expect(await page.textContent('#user')).toBe('Ada Lovelace');
    expect(dialogs).toEqual([]);
    expect(offLoopback).toEqual([]);
    await page.close();
  }, 120_000);
});
