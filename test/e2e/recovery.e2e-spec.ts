import jwt from 'jsonwebtoken';
import { sql } from 'drizzle-orm';
import { DATABASE, type Database, queryRows } from '../../src/database/database';
import { UserRepository } from '../../src/users/user.repository';
import { type ApiObject, createMailhook, createUser, deferred, eventually, expectErrorBody, loopbackSmtpProvider, queryEvents, settles, type SignedIn, signIn, unique, updateMembership, useTenants } from '../support/api';
import { captureLog } from '../support/log-capture';
import { type CaughtMail, useMailCatcher } from '../support/mail-catcher';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

const PASSWORD = 'the original password';
const NEW_PASSWORD = 'a brand new password';
/** Short, so that "replaced by a newer one" needs only a short wait; long enough to hold back a second request at once. */
const INTERVAL_SECONDS = 2;

const bearer = (token: string): string => `Bearer ${token}`;

describe('account recovery by mail (a real SMTP server on 127.0.0.1)', () => {
  const log = captureLog('debug');
  const suite = useTenants({ env: { ...ALLOW_LOOPBACK_RECEIVERS, RESET_MIN_INTERVAL_SECONDS: String(INTERVAL_SECONDS) }, logger: log.logger });
  const catcher = useMailCatcher();
  let secretKey: string;
  /** Every token and OTP mailed, to look for anywhere they must not be. */
  const secrets: string[] = [];

  const resetPath = (): string => `/memberships/${suite.tenant.membershipId}/users/reset-password`;
  const setPasswordPath = (): string => `/memberships/${suite.tenant.membershipId}/users/set-password`;

  beforeAll(async () => {
    const otpSettings = { enabled: true, length: 8, contains_letters: true, contains_digits: true, expires_in: 300 };
    const membership = await updateMembership(suite.t, suite.tenant, { mail_providers: [loopbackSmtpProvider(catcher.port)], otp_settings: otpSettings });
    expect(membership.otp_settings).toEqual(otpSettings);
    secretKey = membership.secret_key as string;
    await createMailhook(suite.t, suite.tenant.admin, {
      name: 'Reset',
      event: 'UserPasswordReset',
      mail_subject: 'Reset your {{membership.name}} password',
      mail_template:
        '<p>Hello {{user.firstname}}</p><a href="https://app.example/reset?token={{reset_token}}">reset</a> ' +
        'valid {{reset_token_expires_in}}s; code <b id="otp">{{otp}}</b> for {{otp_expires_in}}s',
      send_to_utilizer: true,
    });
  });

  interface Mailed {
    mail: CaughtMail;
    token: string;
    otp: string;
  }

  /** Asks for a reset and reads the mail that arrives (the `count`-th to this address). */
  async function resetByMail(email: string, count = catcher.mailsTo(email).length + 1): Promise<Mailed> {
    const res = await suite.t.http().post(resetPath()).send({ email_address: email });
    expect(res.status).toBe(202);
    const mail = await eventually(async () => catcher.mailsTo(email)[count - 1], `reset mail #${count} to ${email}`, 10_000);
    const token = /token=([\w.-]+)"/.exec(mail.body)?.[1] ?? '';
    const otp = /<b id="otp">(\w*)<\/b>/.exec(mail.body)?.[1] ?? '';
    expect(token.split('.')).toHaveLength(3);
    secrets.push(token, otp);
    return { mail, token, otp };
  }

  async function newUser(overrides: Record<string, unknown> = {}): Promise<{ user: ApiObject; email: string; session: SignedIn }> {
    const username = unique('user');
    const email = `${username}@example.com`;
    const user = await createUser(suite.t, suite.tenant.admin, { username, email_address: email, password: PASSWORD, firstname: 'Ada', ...overrides });
    const session = await signIn(suite.t, suite.tenant.membershipId, username, PASSWORD);
    return { user, email, session };
  }

  const setPassword = (token: string, password = NEW_PASSWORD) => suite.t.http().post(setPasswordPath()).send({ reset_token: token, password });
  const verifyOtp = (email: string, otp: string) => suite.t.http().post('/verify-otp').send({ membership_id: suite.tenant.membershipId, email_address: email, otp });

  it('mails the reset link and OTP to the user only, escaping a hostile first name; set-password revokes every session, scoped tokens included', async () => {
    const { user, email, session } = await newUser({ firstname: '<img src=x onerror=alert(1)>', permissions: ['users.read'] });
    const scoped = await suite.t.http().post('/generate-token').set('Authorization', session.auth).send({ scopes: ['users.read'] });
    expect(scoped.status).toBe(201);
    const { mail, token, otp } = await resetByMail(email);
    expect(mail.to).toEqual([email]);
    expect(mail.headers.to).toContain(email);
    expect(mail.body).toContain('Hello &lt;img src=x onerror=alert(1)&gt;');
    expect(mail.body).not.toContain('<img');
    expect(otp).toMatch(/^[23456789BCDFGHJKLMNPQRSTVWXZ]{8}$/);
    expect(mail.body).toContain('valid 3600s');

    const done = await setPassword(token);
    expect(done.status).toBe(204);
    expect(done.text).toBe('');
    for (const access of [session.accessToken, scoped.body.access_token as string]) {
      expectErrorBody(await suite.t.http().get('/me').set('Authorization', bearer(access)), 401, 'TokenWasRevoked');
    }
    await signIn(suite.t, suite.tenant.membershipId, user.username as string, NEW_PASSWORD);
    const old = await suite.t.http().post('/generate-token').set('X-Service-Alias', suite.tenant.membershipId).send({ username: user.username, password: PASSWORD });
    expect(old.status).toBe(401);

    const events = await queryEvents(suite.t, suite.tenant.admin, { event_type: { $in: ['UserPasswordChanged', 'TokenRevoked', 'UserPasswordReset'] } });
    const about = events.filter((event) => event.document._id === user._id || event.document.user_id === user._id);
    const changed = about.find((event) => event.event_type === 'UserPasswordChanged');
    expect(changed?.utilizer_id).toBe(user._id);
    expect(about.find((event) => event.event_type === 'UserPasswordReset')?.utilizer_id).toBe('system');
    const revoked = about.filter((event) => event.event_type === 'TokenRevoked');
    expect(revoked.length).toBeGreaterThanOrEqual(2);
    expect(revoked.every((event) => event.document.reason === 'password_reset')).toBe(true);

    // Single use.
    expectErrorBody(await setPassword(token, 'yet another password'), 401, 'InvalidToken');
  });

  it('answers the same status, body and headers for a known, an unknown and an inactive user, before the user is looked up', async () => {
    const { email } = await newUser();
    const inactive = await newUser();
    expect((await suite.t.http().post(`/memberships/${suite.tenant.membershipId}/users/${inactive.user._id}/freeze`).set('Authorization', suite.tenant.admin.auth)).status).toBe(200);
    const unknown = `${unique('nobody')}@example.com`;
    const shape = (res: { status: number; text: string; headers: Record<string, string> }) => {
      // The date and the per-request id are the only headers that may differ between any two answers.
      const { date, 'x-request-id': requestId, ...headers } = res.headers;
      void date;
      void requestId;
      return { status: res.status, text: res.text, headers };
    };
    const answers = await Promise.all([email, unknown, inactive.email].map((address) => suite.t.http().post(resetPath()).send({ email_address: address })));
    expect(shape(answers[0])).toEqual(shape(answers[1]));
    expect(shape(answers[0])).toEqual(shape(answers[2]));
    expect(answers[0].status).toBe(202);
    expect(answers[0].body).toEqual({ message: 'If the account exists, a message has been sent' });

    // The answer goes out before the user is even looked up, so it cannot take longer for a known
    // address: with every lookup held back, a known and an unknown address are both answered.
    const users = suite.t.app.get(UserRepository);
    const findByEmail = users.findByEmail.bind(users);
    const hold = deferred();
    const lookups = jest.spyOn(users, 'findByEmail').mockImplementation(async (...args) => {
      await hold.promise;
      return findByEmail(...args);
    });
    try {
      const held = Promise.all([email, unknown].map((address) => suite.t.http().post(resetPath()).send({ email_address: address })));
      const answered = await settles(held, 'the answers while the user lookups are held');
      expect(answered.map((res) => shape(res))).toEqual([shape(answers[0]), shape(answers[0])]);
      const looked = await eventually(async () => (lookups.mock.calls.length >= 2 ? lookups.mock.calls.map((call) => call[1]) : undefined), 'the lookups after the answers');
      expect(looked).toEqual(expect.arrayContaining([email, unknown]));
    } finally {
      hold.release();
      lookups.mockRestore();
    }
  });

  it('lets a second request within the interval do nothing, and a newer reset replace the older token', async () => {
    const { user, email } = await newUser();
    const first = await resetByMail(email);
    // Within the interval: answered the same, nothing happens.
    expect((await suite.t.http().post(resetPath()).send({ username: user.username })).status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(catcher.mailsTo(email)).toHaveLength(1);

    await new Promise((resolve) => setTimeout(resolve, INTERVAL_SECONDS * 1000));
    const second = await resetByMail(email, 2);
    expect(second.token).not.toBe(first.token);
    expectErrorBody(await setPassword(first.token), 401, 'InvalidToken');
    expectErrorBody(await verifyOtp(email, first.otp), 401, 'OtpInvalid');
    expect((await setPassword(second.token)).status).toBe(204);
  });

  it('exchanges a right OTP for a reset token that replaces the mailed one; OTP failures all answer the same', async () => {
    const { email } = await newUser();
    const { token, otp } = await resetByMail(email);
    const wrong = await verifyOtp(email, 'BBBBBBBB');
    expectErrorBody(wrong, 401, 'OtpInvalid');
    const unknownUser = await verifyOtp(`${unique('nobody')}@example.com`, otp);
    expect(unknownUser.body).toEqual(wrong.body);

    // Typed with dashes and lower case, as people do.
    const typed = `${otp.slice(0, 4)}-${otp.slice(4)}`.toLowerCase();
    const exchanged = await verifyOtp(email, typed);
    expect(exchanged.status).toBe(201);
    expect(exchanged.body.expires_in).toBe(3600);
    const fresh = exchanged.body.reset_token as string;
    secrets.push(fresh);
    expectErrorBody(await verifyOtp(email, otp), 401, 'OtpInvalid');
    expectErrorBody(await setPassword(token), 401, 'InvalidToken');
    expect((await setPassword(fresh)).status).toBe(204);
  });

  it('counts parallel OTP guesses atomically: never more than 5, then the OTP is gone', async () => {
    const { user, email } = await newUser();
    // Wrong OTPs also count as failed sign-ins of the login, whose lock (10 by default) would refuse
    // some of the 20 before their compare; this test is about the OTP's own cap of 5.
    await updateMembership(suite.t, suite.tenant, { sign_in_policy: { max_failures: 1000 } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const { otp } = await resetByMail(email);
    const guesses = await Promise.all(Array.from({ length: 20 }, (_, i) => verifyOtp(email, `ZZZZZZ${String(i).padStart(2, '0')}`)));
    expect(guesses.every((res) => res.status === 401 && res.body.errorCode === 'OtpInvalid')).toBe(true);
    const { db } = suite.t.app.get<Database>(DATABASE);
    const [row] = await queryRows<{ otp_attempts: number; otp_digest: string | null }>(
      db,
      sql`select otp_attempts, otp_digest from user_challenges where user_id = ${user._id as string} and kind = 'reset'`,
    );
    expect(row.otp_attempts).toBe(5);
    expect(row.otp_digest).toBeNull();
    // The right OTP no longer works.
    expectErrorBody(await verifyOtp(email, otp), 401, 'OtpInvalid');
  });

  it('refuses a reset token as an access token on every token route (401 InvalidToken)', async () => {
    const { email } = await newUser();
    const { token } = await resetByMail(email);
    const attempts = [
      suite.t.http().get('/me').set('Authorization', bearer(token)),
      suite.t.http().get('/verify-token').set('Authorization', bearer(token)),
      suite.t.http().post('/verify-token').send({ token }),
      suite.t.http().get('/refresh-token').set('Authorization', bearer(token)),
      suite.t.http().post('/refresh-token').send({ token }),
      suite.t.http().post('/generate-token').set('Authorization', bearer(token)).send({ scopes: ['users.read'] }),
      suite.t.http().get('/revoke-token').set('Authorization', bearer(token)),
      suite.t.http().get(`/memberships/${suite.tenant.membershipId}/active-tokens`).set('Authorization', bearer(token)),
      suite.t.http().get(`/memberships/${suite.tenant.membershipId}/users`).set('Authorization', bearer(token)),
      suite.t.http().get('/users/check-password').query({ password: PASSWORD }).set('Authorization', bearer(token)),
    ];
    for (const res of await Promise.all(attempts)) expectErrorBody(res, 401, 'InvalidToken');
    // Still a good reset token afterwards.
    expect((await setPassword(token)).status).toBe(204);
  });

  it('ends a pending reset when the password is changed another way', async () => {
    const { user, email, session } = await newUser();
    const { token } = await resetByMail(email);
    const change = await suite.t
      .http()
      .put(`/memberships/${suite.tenant.membershipId}/users/${user._id}/change-password`)
      .set('Authorization', session.auth)
      .send({ current_password: PASSWORD, password: 'changed the usual way' });
    expect(change.status).toBe(204);
    expectErrorBody(await setPassword(token), 401, 'InvalidToken');
  });

  it('answers TokenWasExpired for an expired reset token, InvalidToken for another typ or key, UserInactive for a frozen user', async () => {
    const { user, email } = await newUser();
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: user._id, prn: suite.tenant.membershipId, jti: 'x', iss: suite.tenant.membership.name, aud: suite.tenant.membership.slug };
    const expired = jwt.sign({ ...claims, typ: 'reset', iat: now - 7200, nbf: now - 7200, exp: now - 3600 }, secretKey, { algorithm: 'HS256' });
    expectErrorBody(await setPassword(expired), 401, 'TokenWasExpired');
    const activation = jwt.sign({ ...claims, typ: 'activation', iat: now, nbf: now, exp: now + 600 }, secretKey, { algorithm: 'HS256' });
    expectErrorBody(await setPassword(activation), 401, 'InvalidToken');
    const otherKey = jwt.sign({ ...claims, typ: 'reset', iat: now, nbf: now, exp: now + 600 }, 'not the key', { algorithm: 'HS256' });
    expectErrorBody(await setPassword(otherKey), 401, 'InvalidToken');
    expectErrorBody(await setPassword('garbage'), 401, 'InvalidToken');
    // An access token is not a reset token either.
    expectErrorBody(await setPassword(suite.tenant.admin.accessToken), 401, 'InvalidToken');

    const { token } = await resetByMail(email);
    expect((await suite.t.http().post(`/memberships/${suite.tenant.membershipId}/users/${user._id}/freeze`).set('Authorization', suite.tenant.admin.auth)).status).toBe(200);
    expectErrorBody(await setPassword(token), 401, 'UserInactive');
    expect((await suite.t.http().post(`/memberships/${suite.tenant.membershipId}/users/${user._id}/activate`).set('Authorization', suite.tenant.admin.auth)).status).toBe(200);
    // The token was kept.
    expect((await setPassword(token)).status).toBe(204);
  });

  it('answers hostile input with a clear 4xx', async () => {
    expectErrorBody(await suite.t.http().post(resetPath()).send({}), 400, 'ModelValidationError');
    expectErrorBody(await suite.t.http().post(resetPath()).send({ email_address: 'a@example.com', username: 'a' }), 400, 'ModelValidationError');
    expectErrorBody(await suite.t.http().post(resetPath()).send({ email_address: 'not an address' }), 400, 'ModelValidationError');
    expectErrorBody(await suite.t.http().post(resetPath()).send({ username: ['a'] }), 400, 'ModelValidationError');
    // null is neither of the two (not a 202 whose work then fails on a null login, nor a 500 at /verify-otp).
    for (const login of [{ username: null }, { email_address: null }, { username: 'a', email_address: null }]) {
      expectErrorBody(await suite.t.http().post(resetPath()).send(login), 400, 'ModelValidationError');
      expectErrorBody(await suite.t.http().post('/verify-otp').send({ membership_id: suite.tenant.membershipId, otp: '1234', ...login }), 400, 'ModelValidationError');
    }
    expectErrorBody(await suite.t.http().post('/memberships/nope/users/reset-password').send({ username: 'a' }), 404, 'MembershipNotFound');
    expectErrorBody(await setPassword('x'.repeat(10_000)), 400, 'ModelValidationError');
    expectErrorBody(await setPassword('a.b.c', 'short'), 400, 'ModelValidationError');
    expectErrorBody(await suite.t.http().post('/verify-otp').send({ membership_id: suite.tenant.membershipId, otp: '1234' }), 400, 'ModelValidationError');
    expectErrorBody(await suite.t.http().post('/verify-otp').send({ membership_id: 'unknown', username: 'a', otp: '1234' }), 404, 'MembershipNotFound');
    const otp = await suite.t.http().put(`/memberships/${suite.tenant.membershipId}`).set('Authorization', suite.tenant.admin.auth).send({
      name: suite.tenant.membership.name,
      otp_settings: { enabled: true, contains_letters: false, contains_digits: false },
    });
    expectErrorBody(otp, 400, 'ModelValidationError');
    for (const bad of [{ length: 3 }, { length: 13 }, { expires_in: 59 }, { expires_in: 3601 }, { enabled: 'yes' }]) {
      const res = await suite.t.http().put(`/memberships/${suite.tenant.membershipId}`).set('Authorization', suite.tenant.admin.auth).send({ name: suite.tenant.membership.name, otp_settings: bad });
      expectErrorBody(res, 400, 'ModelValidationError');
    }
  });

  it('keeps every mailed token and OTP out of events, log lines and answers', async () => {
    expect(secrets.length).toBeGreaterThan(4);
    const events = await queryEvents(suite.t, suite.tenant.admin, {}, { limit: '1000' });
    expect(events.length).toBeGreaterThan(10);
    const eventText = JSON.stringify(events);
    const logText = log.text();
    expect(logText.length).toBeGreaterThan(0);
    for (const secret of secrets.filter((value) => value.length >= 4)) {
      expect(eventText).not.toContain(secret);
      expect(logText).not.toContain(secret);
    }
    // The membership answer keeps otp_settings when a PUT leaves it out.
    const put = await suite.t.http().put(`/memberships/${suite.tenant.membershipId}`).set('Authorization', suite.tenant.admin.auth).send({
      name: suite.tenant.membership.name,
      expires_in: 3000,
    });
    expect(put.status).toBe(200);
    expect(put.body.otp_settings.enabled).toBe(true);
  });
});
