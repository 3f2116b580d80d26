import type { Response } from 'supertest';
import { ConfigError, loadConfig } from '../../src/config/config';
import {
  type ApiObject,
  as,
  bootInstallation,
  createMembership,
  createUser,
  createMailhook,
  createWebhook,
  type CreatedMembership,
  eventually,
  expectErrorBody,
  loopbackSmtpProvider,
  queryEvents,
  signIn,
  unique,
  updateMembership,
  useInstallation,
} from '../support/api';
import type { TestApp } from '../support/app';
import { captureLog } from '../support/log-capture';
import { useMailCatcher } from '../support/mail-catcher';
import { ALLOW_LOOPBACK_RECEIVERS, WebhookReceiver } from '../support/webhook-receiver';

const PASSWORD = 'the right password';
const WRONG = 'a wrong password guessed';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Headers that differ between any two answers whatever they say. */
const PER_ANSWER = new Set(['date', 'x-request-id', 'retry-after', 'connection', 'keep-alive']);
const headersOf = (res: Response): Record<string, string> =>
  Object.fromEntries(Object.entries(res.headers as Record<string, string>).filter(([name]) => !PER_ANSWER.has(name)));

function expectLocked(res: Response): number {
  expectErrorBody(res, 429, 'TooManySignInAttempts');
  expect(res.body).toEqual({ statusCode: 429, errorCode: 'TooManySignInAttempts', message: 'Too many failed sign-in attempts; try again later' });
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
  return retryAfter;
}

describe('sign-in defenses (contract "Sign-in defenses")', () => {
  const log = captureLog('trace');
  const suite = useInstallation({ logger: log.logger, env: ALLOW_LOOPBACK_RECEIVERS });
  const catcher = useMailCatcher();
  let receiver: WebhookReceiver;
  beforeAll(async () => (receiver = await WebhookReceiver.start()));
  afterAll(async () => receiver?.close());

  /** A membership of its own, with the policy set: each test counts from zero. */
  async function membershipWith(policy: ApiObject): Promise<CreatedMembership> {
    const tenant = await createMembership(suite.t, suite.admin);
    const updated = await updateMembership(suite.t, tenant, { sign_in_policy: policy });
    expect(updated.sign_in_policy).toEqual({ max_failures: 10, window_seconds: 900, lock_seconds: 60, ...policy });
    return tenant;
  }

  /** A user of a membership with the policy set, signed in. */
  async function signedInUserWith(policy: ApiObject) {
    const tenant = await membershipWith(policy);
    const user = await createUser(suite.t, tenant.admin, { password: PASSWORD });
    const session = await signIn(suite.t, tenant.membershipId, user.username, PASSWORD);
    return { tenant, user, session };
  }

  const attempt = (t: TestApp, membershipId: string, username: string, password: string, headers: Record<string, string> = {}) =>
    t.http().post('/generate-token').set('X-Service-Alias', membershipId).set(headers).send({ username, password });

  it('sign_in_policy: defaults shown, each field in its range, kept when a PUT omits it', async () => {
    const tenant = await createMembership(suite.t, suite.admin);
    const read = await as(suite.t, tenant.admin).get(`/memberships/${tenant.membershipId}`);
    expect(read.body.sign_in_policy).toEqual({ max_failures: 10, window_seconds: 900, lock_seconds: 60 });
    for (const bad of [{ max_failures: 0 }, { max_failures: 1001 }, { window_seconds: 59 }, { window_seconds: 86_401 }, { lock_seconds: 0 }, { lock_seconds: 86_401 }, { max_failures: '3' }, { other: 1 }]) {
      const res = await as(suite.t, tenant.admin).put(`/memberships/${tenant.membershipId}`, { name: tenant.membership.name, sign_in_policy: bad });
      expectErrorBody(res, 400, 'ModelValidationError');
    }
    const set = await updateMembership(suite.t, tenant, { sign_in_policy: { max_failures: 4 } });
    expect(set.sign_in_policy).toEqual({ max_failures: 4, window_seconds: 900, lock_seconds: 60 });
    const kept = await updateMembership(suite.t, tenant, { expires_in: 1200 });
    expect(kept.sign_in_policy).toEqual({ max_failures: 4, window_seconds: 900, lock_seconds: 60 });
  });

  it('max_failures wrong passwords lock the login: 429 with Retry-After whatever the password; the lock ends on time', async () => {
    const tenant = await membershipWith({ max_failures: 3, lock_seconds: 2 });
    const user = await createUser(suite.t, tenant.admin, { password: PASSWORD });
    for (let i = 0; i < 3; i++) expectErrorBody(await attempt(suite.t, tenant.membershipId, user.username, WRONG), 401, 'InvalidCredentials');
    // The right password does not get through a lock, nor does the e-mail address as the login.
    expect(expectLocked(await attempt(suite.t, tenant.membershipId, user.username, PASSWORD))).toBeLessThanOrEqual(2);
    expectLocked(await attempt(suite.t, tenant.membershipId, user.email_address, PASSWORD));
    // Another user of the membership is not locked.
    const other = await createUser(suite.t, tenant.admin, { password: PASSWORD });
    expect((await attempt(suite.t, tenant.membershipId, other.username, PASSWORD)).status).toBe(201);
    await sleep(2100);
    expect((await attempt(suite.t, tenant.membershipId, user.username, PASSWORD)).status).toBe(201);
    // The success cleared the count: max_failures - 1 wrong passwords lock nothing.
    for (let i = 0; i < 2; i++) expectErrorBody(await attempt(suite.t, tenant.membershipId, user.username, WRONG), 401, 'InvalidCredentials');
    expect((await attempt(suite.t, tenant.membershipId, user.username, PASSWORD)).status).toBe(201);
  });

  it('8 parallel wrong passwords against max_failures 3: exactly 3 reach the password check (401), 5 are refused before it (429)', async () => {
    const tenant = await membershipWith({ max_failures: 3, lock_seconds: 60 });
    const user = await createUser(suite.t, tenant.admin, { password: PASSWORD });
    for (const login of [user.username, unique('nobody')]) {
      const answers = await Promise.all(Array.from({ length: 8 }, () => attempt(suite.t, tenant.membershipId, login, WRONG)));
      const statuses = answers.map((res) => res.status).sort();
      expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429]);
    }
  });

  it('an unknown name locks exactly like a real one: same statuses, bodies and headers through the lock', async () => {
    const tenant = await membershipWith({ max_failures: 3, lock_seconds: 30 });
    const user = await createUser(suite.t, tenant.admin, { password: PASSWORD });
    const run = async (login: string) => {
      const answers: Response[] = [];
      for (let i = 0; i < 3; i++) answers.push(await attempt(suite.t, tenant.membershipId, login, WRONG));
      answers.push(await attempt(suite.t, tenant.membershipId, login, WRONG));
      answers.push(await attempt(suite.t, tenant.membershipId, login, PASSWORD));
      return answers;
    };
    const real = await run(user.username);
    // Case does not make a new login: the unknown name counts lower-cased.
    const unknownName = unique('Nobody-Here');
    const unknown = await run(unknownName.toUpperCase());
    expect(real.map((res) => res.status)).toEqual([401, 401, 401, 429, 429]);
    expect(unknown.map((res) => res.status)).toEqual(real.map((res) => res.status));
    expect(unknown.map((res) => res.body)).toEqual(real.map((res) => res.body));
    expect(unknown.map(headersOf)).toEqual(real.map(headersOf));
    for (const i of [3, 4]) expect(Math.abs(Number(unknown[i].headers['retry-after']) - Number(real[i].headers['retry-after']))).toBeLessThanOrEqual(1);
    expectLocked(await attempt(suite.t, tenant.membershipId, unknownName.toLowerCase(), WRONG));
    // No event for the unknown name; one for the user (below).
    const locks = await queryEvents(suite.t, tenant.admin, { event_type: 'UserSignInLocked' });
    expect(locks.map((event) => (event.document as ApiObject).user._id)).toEqual([user._id]);
  });

  it('each further lock without a success doubles (1 s, 2 s, 4 s); only the first records UserSignInLocked, delivered to a webhook', async () => {
    const tenant = await membershipWith({ max_failures: 1, lock_seconds: 1 });
    await createWebhook(suite.t, tenant.admin, receiver.url('/locked'), {
      event: 'UserSignInLocked',
      request: { method: 'POST', url: receiver.url('/locked'), body: { user: '{{document.user.username}}', failures: '{{document.failures}}', until: '{{document.locked_until}}' } },
    });
    const user = await createUser(suite.t, tenant.admin, { password: PASSWORD });
    const retryAfters: number[] = [];
    for (let lock = 0; lock < 3; lock++) {
      expectErrorBody(await attempt(suite.t, tenant.membershipId, user.username, WRONG), 401, 'InvalidCredentials');
      const retryAfter = expectLocked(await attempt(suite.t, tenant.membershipId, user.username, PASSWORD));
      retryAfters.push(retryAfter);
      await sleep(retryAfter * 1000 + 100);
    }
    expect(retryAfters).toEqual([1, 2, 4]);
    const locks = await queryEvents(suite.t, tenant.admin, { event_type: 'UserSignInLocked' });
    expect(locks).toHaveLength(1);
    const [event] = locks;
    expect(event.utilizer_id).toBe('system');
    const document = event.document as ApiObject;
    expect(Object.keys(document).sort()).toEqual(['failures', 'locked_until', 'user']);
    expect(document.user).toMatchObject({ _id: user._id, username: user.username, email_address: user.email_address });
    expect(document.user.password).toBeUndefined();
    expect(document.failures).toBe(1);
    expect(new Date(document.locked_until as string).toISOString()).toBe(document.locked_until);
    const [delivered] = await receiver.waitForRequests(1, { path: '/locked' });
    expect(delivered.json.payload).toEqual({ user: user.username, failures: '1', until: document.locked_until });
    expect(delivered.json.document.user._id).toBe(user._id);
    // A success ends the doubling: the next lock is 1 s again.
    expect((await attempt(suite.t, tenant.membershipId, user.username, PASSWORD)).status).toBe(201);
    expectErrorBody(await attempt(suite.t, tenant.membershipId, user.username, WRONG), 401, 'InvalidCredentials');
    expect(expectLocked(await attempt(suite.t, tenant.membershipId, user.username, PASSWORD))).toBe(1);
  });

  it('POST .../users/{id}/unlock (users.update.{id}, 204) clears the count; 403 without the permission, 404 for no user', async () => {
    const tenant = await membershipWith({ max_failures: 2, lock_seconds: 600 });
    const user = await createUser(suite.t, tenant.admin, { password: PASSWORD });
    const plain = await createUser(suite.t, tenant.admin, { password: PASSWORD });
    const plainSession = await signIn(suite.t, tenant.membershipId, plain.username, PASSWORD);
    for (let i = 0; i < 2; i++) await attempt(suite.t, tenant.membershipId, user.username, WRONG);
    expectLocked(await attempt(suite.t, tenant.membershipId, user.username, PASSWORD));
    const unlockPath = (id: string) => `/memberships/${tenant.membershipId}/users/${id}/unlock`;
    expectErrorBody(await suite.t.http().post(unlockPath(user._id)).set('Authorization', plainSession.auth), 403, 'AccessDenied');
    expectErrorBody(await as(suite.t, tenant.admin).post(unlockPath('0123456789abcdef01234567'), {}), 404, 'UserNotFound');
    // Another membership's admin cannot unlock here.
    const otherTenant = await createMembership(suite.t, suite.admin);
    expect((await suite.t.http().post(unlockPath(user._id)).set('Authorization', otherTenant.admin.auth)).status).toBe(403);
    expectLocked(await attempt(suite.t, tenant.membershipId, user.username, PASSWORD));
    const unlocked = await as(suite.t, tenant.admin).post(unlockPath(user._id), {});
    expect(unlocked.status).toBe(204);
    expect((await attempt(suite.t, tenant.membershipId, user.username, PASSWORD)).status).toBe(201);
  });

  it('nobody unlocks their own login: the own-record rule gives no unlock, so a stolen token buys no unlimited guesses', async () => {
    const { tenant, user, session } = await signedInUserWith({ max_failures: 2, lock_seconds: 600 });
    for (let i = 0; i < 2; i++) await suite.t.http().get(`/users/check-password?password=${encodeURIComponent(WRONG)}`).set('Authorization', session.auth);
    expectLocked(await suite.t.http().get(`/users/check-password?password=${encodeURIComponent(WRONG)}`).set('Authorization', session.auth));
    const unlockPath = `/memberships/${tenant.membershipId}/users/${user._id}/unlock`;
    expectErrorBody(await suite.t.http().post(unlockPath).set('Authorization', session.auth), 403, 'AccessDenied');
    expectLocked(await suite.t.http().get(`/users/check-password?password=${encodeURIComponent(WRONG)}`).set('Authorization', session.auth));
  });

  it('a wrong current_password, a false check-password and a wrong /verify-otp each count as a failure of the login', async () => {
    const { tenant, user, session } = await signedInUserWith({ max_failures: 3, lock_seconds: 600 });
    const changePath = `/memberships/${tenant.membershipId}/users/${user._id}/change-password`;
    const change = (current: string) =>
      suite.t.http().put(changePath).set('Authorization', session.auth).send({ current_password: current, password: 'a brand new password' });
    const check = (password: string) => suite.t.http().post('/users/check-password').set('Authorization', session.auth).send({ password });
    const verifyOtp = (username: string) => suite.t.http().post('/verify-otp').send({ membership_id: tenant.membershipId, username, otp: '123456' });

    expectErrorBody(await change(WRONG), 400, 'InvalidCurrentPassword');
    expect((await check(WRONG)).body).toEqual({ valid: false });
    expectErrorBody(await verifyOtp(user.username), 401, 'OtpInvalid');
    // Three failures of three kinds: the login is locked everywhere a typed secret is checked.
    expectLocked(await attempt(suite.t, tenant.membershipId, user.username, PASSWORD));
    expectLocked(await check(PASSWORD));
    expectLocked(await change(PASSWORD));
    expectLocked(await verifyOtp(user.username));
    // An unknown name at /verify-otp counts under its name, as at sign-in.
    const nobody = unique('nobody');
    for (let i = 0; i < 3; i++) expectErrorBody(await verifyOtp(nobody), 401, 'OtpInvalid');
    expectLocked(await verifyOtp(nobody));
    expectLocked(await attempt(suite.t, tenant.membershipId, nobody, WRONG));
  });

  it('a password set by reset clears the count and the lock', async () => {
    const tenant = await membershipWith({ max_failures: 2, lock_seconds: 600 });
    await updateMembership(suite.t, tenant, { mail_providers: [loopbackSmtpProvider(catcher.port)], sign_in_policy: { max_failures: 2, lock_seconds: 600 } });
    await createMailhook(suite.t, tenant.admin, { name: 'Reset', event: 'UserPasswordReset', mail_subject: 'Reset', mail_template: 'token={{reset_token}};', send_to_utilizer: true });
    const user = await createUser(suite.t, tenant.admin, { password: PASSWORD });
    for (let i = 0; i < 2; i++) await attempt(suite.t, tenant.membershipId, user.username, WRONG);
    expectLocked(await attempt(suite.t, tenant.membershipId, user.username, PASSWORD));
    const reset = await suite.t.http().post(`/memberships/${tenant.membershipId}/users/reset-password`).send({ email_address: user.email_address });
    expect(reset.status).toBe(202);
    const mail = await eventually(async () => catcher.mailsTo(user.email_address)[0], 'the reset mail', 10_000);
    const token = /token=([\w.-]+);/.exec(mail.body)?.[1] ?? '';
    const NEW_PASSWORD = 'the password set by reset';
    const set = await suite.t.http().post(`/memberships/${tenant.membershipId}/users/set-password`).send({ reset_token: token, password: NEW_PASSWORD });
    expect(set.status).toBe(204);
    expect((await attempt(suite.t, tenant.membershipId, user.username, NEW_PASSWORD)).status).toBe(201);
  });

  it('a right current_password or check-password answer clears the count', async () => {
    const { tenant, user, session } = await signedInUserWith({ max_failures: 2, lock_seconds: 600 });
    const check = (password: string) => suite.t.http().post('/users/check-password').set('Authorization', session.auth).send({ password });
    const NEW_PASSWORD = 'the changed password';
    // Without the clearing, each right answer would leave its attempt counted and the third wrong one would be refused.
    expect((await check(WRONG)).body).toEqual({ valid: false });
    expect((await check(PASSWORD)).body).toEqual({ valid: true });
    expect((await check(WRONG)).body).toEqual({ valid: false });
    const changed = await suite.t
      .http()
      .put(`/memberships/${tenant.membershipId}/users/${user._id}/change-password`)
      .set('Authorization', session.auth)
      .send({ current_password: PASSWORD, password: NEW_PASSWORD });
    expect(changed.status).toBe(204);
    expect((await check(WRONG)).body).toEqual({ valid: false });
    expect((await check(NEW_PASSWORD)).body).toEqual({ valid: true });
  });

  it('counts and locks are metered (reason="locked") and no password reaches a log line (trace) or an event', async () => {
    const metrics = await suite.t.http().get('/metrics');
    expect(metrics.text).toMatch(/portcullis_sign_in_failures_total\{reason="locked"\} [1-9]/);
    const events = await queryEvents(suite.t, suite.admin, {}, { limit: '1000' });
    for (const secret of [PASSWORD, WRONG]) {
      expect(log.text()).not.toContain(secret);
      expect(JSON.stringify(events)).not.toContain(secret);
    }
    expect(log.text()).toContain('sign-in locked');
  });
});

describe('the per-address lock and TRUST_PROXY', () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  async function bootWith(env: Record<string, string>): Promise<{ t: TestApp; first: CreatedMembership; second: CreatedMembership }> {
    const booted = await bootInstallation({ env: { SIGN_IN_ADDRESS_MAX_FAILURES: '3', ...env } });
    apps.push(booted.t);
    const first = await createMembership(booted.t, booted.admin);
    const second = await createMembership(booted.t, booted.admin);
    return { t: booted.t, first, second };
  }

  const attempt = (t: TestApp, membershipId: string, username: string, password: string, headers: Record<string, string> = {}) =>
    t.http().post('/generate-token').set('X-Service-Alias', membershipId).set(headers).send({ username, password });

  it('with TRUST_PROXY, X-Forwarded-For names the address: its failures over logins and memberships lock it, and only it', async () => {
    const { t, first, second } = await bootWith({ TRUST_PROXY: 'loopback' });
    const from = (address: string) => ({ 'X-Forwarded-For': address });
    const guesser = from('203.0.113.7');
    expectErrorBody(await attempt(t, first.membershipId, unique('nobody'), WRONG, guesser), 401, 'InvalidCredentials');
    expectErrorBody(await attempt(t, second.membershipId, unique('nobody'), WRONG, guesser), 401, 'InvalidCredentials');
    expectErrorBody(await attempt(t, first.membershipId, first.admin.username, WRONG, guesser), 401, 'InvalidCredentials');
    // The address is locked: even a right password of another login, in another membership.
    const retryAfter = expectLocked(await attempt(t, second.membershipId, second.admin.username, second.admin.password, guesser));
    expect(retryAfter).toBeGreaterThan(800);
    // X-IpAddress is recorded with the session but never trusted for the lock.
    expectLocked(await attempt(t, second.membershipId, second.admin.username, second.admin.password, { ...guesser, 'X-IpAddress': '198.51.100.1' }));
    // Another client address signs in.
    expect((await attempt(t, second.membershipId, second.admin.username, second.admin.password, from('198.51.100.1'))).status).toBe(201);
    // The user whose name was guessed (once) is not locked by the address's lock.
    expect((await attempt(t, first.membershipId, first.admin.username, first.admin.password, from('198.51.100.2'))).status).toBe(201);
  });

  it('an IPv6 client counts by its /64: failures from addresses of one /64 lock all of it, and no other /64', async () => {
    const { t, first, second } = await bootWith({ TRUST_PROXY: 'loopback' });
    const from = (address: string) => ({ 'X-Forwarded-For': address });
    // Three addresses of one /64, as a client stepping through its privacy addresses would.
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2:aaaa::2', '2001:db8:1:2:ffff:ffff:ffff:fffe']) {
      expectErrorBody(await attempt(t, first.membershipId, unique('nobody'), WRONG, from(address)), 401, 'InvalidCredentials');
    }
    expectLocked(await attempt(t, second.membershipId, second.admin.username, second.admin.password, from('2001:db8:1:2::99')));
    // The next /64 is another client; an IPv4 client too.
    expect((await attempt(t, second.membershipId, second.admin.username, second.admin.password, from('2001:db8:1:3::1'))).status).toBe(201);
    expect((await attempt(t, second.membershipId, second.admin.username, second.admin.password, from('198.51.100.3'))).status).toBe(201);
  });

  it('without TRUST_PROXY (the default) X-Forwarded-For is ignored: the socket address is counted', async () => {
    const { t, first } = await bootWith({});
    for (let i = 0; i < 3; i++) {
      expectErrorBody(await attempt(t, first.membershipId, unique('nobody'), WRONG, { 'X-Forwarded-For': `203.0.113.${10 + i}` }), 401, 'InvalidCredentials');
    }
    expectLocked(await attempt(t, first.membershipId, first.admin.username, first.admin.password, { 'X-Forwarded-For': '198.51.100.9' }));
  });

  it('parallel guesses over many logins from one address: no more reach the password check than the address allows', async () => {
    const { t, first, second } = await bootWith({ TRUST_PROXY: 'loopback' });
    const guesser = { 'X-Forwarded-For': '203.0.113.50' };
    // One wrong password for each of 40 names at once: each name is far from its own lock, so
    // only the address stands between the guesser and 40 guesses. Its attempts in flight count.
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => attempt(t, i % 2 ? first.membershipId : second.membershipId, unique('nobody'), WRONG, guesser)),
    );
    const statuses = answers.map((res) => res.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(37);
    expectLocked(await attempt(t, first.membershipId, first.admin.username, first.admin.password, guesser));
  });

  it('right passwords do not use up an address: only failures stay counted', async () => {
    const { t, first, second } = await bootWith({ TRUST_PROXY: 'loopback' });
    const office = { 'X-Forwarded-For': '198.51.100.60' };
    for (let i = 0; i < 2; i++) expectErrorBody(await attempt(t, first.membershipId, unique('nobody'), WRONG, office), 401, 'InvalidCredentials');
    // Many sign-ins from the same address, one after another, and a right current password.
    for (let i = 0; i < 6; i++) {
      const tenant = i % 2 ? first : second;
      expect((await attempt(t, tenant.membershipId, tenant.admin.username, tenant.admin.password, office)).status).toBe(201);
    }
    const check = await t.http().post('/users/check-password').set('Authorization', first.admin.auth).set(office).send({ password: first.admin.password });
    expect(check.body).toEqual({ valid: true });
    // The third failure is the address's third: then it is locked.
    expectErrorBody(await attempt(t, first.membershipId, unique('nobody'), WRONG, office), 401, 'InvalidCredentials');
    expectLocked(await attempt(t, second.membershipId, second.admin.username, second.admin.password, office));
  });

  it('a right password whose second step is due does not use up an address either', async () => {
    const { t, first } = await bootWith({ TRUST_PROXY: 'loopback' });
    const office = { 'X-Forwarded-For': '198.51.100.61' };
    const current = (await as(t, first.admin).get(`/memberships/${first.membershipId}`)).body;
    expect((await as(t, first.admin).put(`/memberships/${first.membershipId}`, { name: current.name, mfa_policy: 'required' })).status).toBe(200);
    for (let i = 0; i < 2; i++) expectErrorBody(await attempt(t, first.membershipId, unique('nobody'), WRONG, office), 401, 'InvalidCredentials');
    // Each right password stops at the second step (MfaRequired, enrollment due): none is a failure of the address.
    for (let i = 0; i < 4; i++) expectErrorBody(await attempt(t, first.membershipId, first.admin.username, first.admin.password, office), 401, 'MfaRequired');
    expectErrorBody(await attempt(t, first.membershipId, unique('nobody'), WRONG, office), 401, 'InvalidCredentials');
    expectLocked(await attempt(t, first.membershipId, first.admin.username, first.admin.password, office));
  });

  it('settings are validated at start with one line naming the variable', () => {
    const base = { SETUP_TOKEN: 'x'.repeat(32) };
    expect(loadConfig(base).trustProxy).toBe(false);
    expect(loadConfig({ ...base, TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ ...base, TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ ...base, TRUST_PROXY: '10.0.0.0/8, 192.0.2.1,loopback' }).trustProxy).toEqual(['10.0.0.0/8', '192.0.2.1', 'loopback']);
    expect(loadConfig(base).signInAddressMaxFailures).toBe(200);
    expect(loadConfig(base).signInAddressWindowSeconds).toBe(900);
    // Off is for the benchmark's side-by-side only: never in production.
    expect(loadConfig(base).signInDefenses).toBe(true);
    expect(loadConfig({ ...base, NODE_ENV: 'test', SIGN_IN_DEFENSES: 'off' }).signInDefenses).toBe(false);
    expect(() => loadConfig({ ...base, NODE_ENV: 'production', SIGN_IN_DEFENSES: 'off' })).toThrow(/^Invalid configuration: SIGN_IN_DEFENSES /);
    for (const [name, value] of [
      ['TRUST_PROXY', 'maybe'],
      ['TRUST_PROXY', '10.0.0.0/99'],
      ['SIGN_IN_ADDRESS_MAX_FAILURES', '0'],
      ['SIGN_IN_ADDRESS_MAX_FAILURES', 'many'],
      ['SIGN_IN_ADDRESS_WINDOW_SECONDS', '59'],
      ['SIGN_IN_ADDRESS_WINDOW_SECONDS', '86401'],
      ['SIGN_IN_DEFENSES', 'maybe'],
    ]) {
      expect(() => loadConfig({ ...base, [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name} `));
    }
  });
});
