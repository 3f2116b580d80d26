import { eq } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { DATABASE, type Database } from '../../src/database/database';
import { sessions } from '../../src/database/schema';
import { SignInSessions } from '../../src/tokens/sign-in-sessions';
import {
  type ApiObject,
  type ApiCaller,
  as,
  createSignedInUser,
  createUser,
  createMailhook,
  createWebhook,
  deferred,
  eventually,
  expectErrorBody,
  loopbackSmtpProvider,
  queryEvents,
  settles,
  unique,
  updateMembership,
  useTenants,
} from '../support/api';
import { useMailCatcher } from '../support/mail-catcher';
import type { TestApp } from '../support/app';
import { captureLog } from '../support/log-capture';
import { newSigningKey, startOidcProvider, type OidcTestProvider } from '../support/oidc-provider';
import { awayFromStepEdge, currentStep, hotp, totpAt } from '../support/totp';
import { ALLOW_LOOPBACK_RECEIVERS, WebhookReceiver } from '../support/webhook-receiver';

const RECOVERY_CODE = /^[23456789BCDFGHJKLMNPQRSTVWXZ]{10}$/;
const claimsOf = (token: string): ApiObject => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());

/** TOTP, recovery codes, the second step of sign-in, required MFA and amr (contract, "Second factors"). */
describe('second factors', () => {
  const log = captureLog('trace');
  const suite = useTenants({ env: { ...ALLOW_LOOPBACK_RECEIVERS }, logger: log.logger });
  const catcher = useMailCatcher();
  let receiver: WebhookReceiver;
  /** Every secret a test saw: none may appear in a log line, an event or a webhook. */
  const secrets: string[] = [];

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    for (const event of ['UserMfaEnabled', 'UserMfaDisabled', 'UserMfaRecoveryCodeUsed', 'TokenGenerated']) {
      await createWebhook(suite.t, suite.tenant.admin, receiver.url(`/${event}`), { event });
    }
  });
  afterAll(async () => receiver?.close());

  const t = (): TestApp => suite.t;
  const m = (): string => suite.tenant.membershipId;
  const mfaPath = (userId: string) => `/memberships/${m()}/users/${userId}/mfa`;
  const firstStep = (username: string, password: string, membershipId = m()) =>
    t().http().post('/generate-token').set('X-Service-Alias', membershipId).send({ username, password });
  const secondStep = (body: Record<string, unknown>) => t().http().post('/generate-token/mfa').send(body);
  /** The first step's 401 MfaRequired, exactly: the error body, an mfa_token living 300 s, and what the second step takes. */
  const expectMfaRequired = (res: { status: number; body: unknown }, next: { mfa_methods: string[]; enroll?: string[] }): void => {
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ statusCode: 401, errorCode: 'MfaRequired', message: expect.any(String), mfa_token: expect.any(String), ...next, expires_in: 300 });
  };

  /**
   * A user with TOTP enabled: its secret, recovery codes and a session from before it was enabled.
   * Confirmed with the PREVIOUS step's code (accepted), so the current and next steps are still unused.
   */
  async function userWithTotp(admin: ApiCaller = suite.tenant.admin) {
    await awayFromStepEdge();
    const { user, session } = await createSignedInUser(t(), admin, { permissions: ['users.read'] });
    const call = as(t(), session);
    const started = await call.post(`/memberships/${admin.membershipId}/users/${user._id}/mfa/totp`, { current_password: user.password });
    expect(started.status).toBe(201);
    const secret = started.body.secret as string;
    const confirmed = await call.post(`/memberships/${admin.membershipId}/users/${user._id}/mfa/totp/confirm`, { code: totpAt(secret, currentStep() - 1) });
    expect(confirmed.status).toBe(200);
    const recoveryCodes = confirmed.body.recovery_codes as string[];
    secrets.push(secret, ...recoveryCodes);
    return { user, session, secret, recoveryCodes };
  }

  /** The first step of a user with a factor: 401 MfaRequired and its mfa_token. */
  async function mfaTokenOf(username: string, password: string, membershipId = m()): Promise<string> {
    const res = await firstStep(username, password, membershipId);
    expect({ status: res.status, code: res.body.errorCode }).toEqual({ status: 401, code: 'MfaRequired' });
    secrets.push(res.body.mfa_token);
    return res.body.mfa_token;
  }

  it('computes RFC 6238 codes as the RFC does (the test helper itself, appendix B vector)', () => {
    // T = 59 s with the ASCII key "12345678901234567890": 94287082 (8 digits).
    expect(hotp(Buffer.from('12345678901234567890'), Math.floor(59 / 30), 8)).toBe('94287082');
  });

  describe('TOTP enrollment', () => {
    it('answers a null current_password with 400 on every route that takes one, as the user itself (not a 500)', async () => {
      const { user, session } = await createSignedInUser(t(), suite.tenant.admin, { username: unique('nul') });
      const call = as(t(), session);
      const body = { current_password: null };
      expectErrorBody(await call.post(`${mfaPath(user._id)}/totp`, body), 400, 'ModelValidationError');
      expectErrorBody(await call.post(`${mfaPath(user._id)}/totp/confirm`, { code: '123456', ...body }), 400, 'ModelValidationError');
      expectErrorBody(await call.post(`${mfaPath(user._id)}/recovery-codes`, body), 400, 'ModelValidationError');
      expectErrorBody(await call.post(`${mfaPath(user._id)}/webauthn/options`, body), 400, 'ModelValidationError');
      expectErrorBody(await call.post(`${mfaPath(user._id)}/webauthn`, { name: 'Laptop', response: {}, ...body }), 400, 'ModelValidationError');
      expectErrorBody(await call.del(`${mfaPath(user._id)}/totp`, body), 400, 'ModelValidationError');
      expectErrorBody(await call.del(`${mfaPath(user._id)}/webauthn/${suite.tenant.membershipId}`, body), 400, 'ModelValidationError');
    });

    it('needs the current password, gives a 160-bit secret and the otpauth URI, and enables on the first right code', async () => {
      const { user, session } = await createSignedInUser(t(), suite.tenant.admin, { username: unique('ada') });
      const call = as(t(), session);
      expectErrorBody(await call.post(`${mfaPath(user._id)}/totp`, {}), 400, 'ModelValidationError');
      expectErrorBody(await call.post(`${mfaPath(user._id)}/totp`, { current_password: 'not the password' }), 400, 'InvalidCurrentPassword');

      const started = await call.post(`${mfaPath(user._id)}/totp`, { current_password: user.password });
      expect(started.status).toBe(201);
      const secret = started.body.secret as string;
      secrets.push(secret);
      expect(secret).toMatch(/^[A-Z2-7]{32}$/); // 32 base32 characters: 160 bits
      const name = encodeURIComponent(suite.tenant.membership.name);
      expect(started.body.otpauth_uri).toBe(
        `otpauth://totp/${name}:${encodeURIComponent(user.username)}?secret=${secret}&issuer=${name}&algorithm=SHA1&digits=6&period=30`,
      );
      expect((await call.get(mfaPath(user._id))).body).toEqual({ totp: { enabled: false }, webauthn: [], recovery_codes_left: 0 });

      await awayFromStepEdge();
      const wrong = await call.post(`${mfaPath(user._id)}/totp/confirm`, { code: totpAt(secret, currentStep() + 5) });
      expectErrorBody(wrong, 400, 'MfaCodeInvalid');
      const confirmed = await call.post(`${mfaPath(user._id)}/totp/confirm`, { code: totpAt(secret, currentStep()) });
      expect(confirmed.status).toBe(200);
      expect(confirmed.body.recovery_codes).toHaveLength(10);
      for (const code of confirmed.body.recovery_codes) expect(code).toMatch(RECOVERY_CODE);
      secrets.push(...confirmed.body.recovery_codes);

      const state = await call.get(mfaPath(user._id));
      expect(state.body).toEqual({ totp: { enabled: true, created_at: expect.any(String) }, webauthn: [], recovery_codes_left: 10 });
      // An administrator with users.read sees the state too; still no secret in it.
      const asAdmin = await as(t(), suite.tenant.admin).get(mfaPath(user._id));
      expect(asAdmin.body).toEqual(state.body);
      const enabled = await queryEvents(t(), suite.tenant.admin, { event_type: 'UserMfaEnabled', 'document.user_id': user._id });
      expect(enabled.map((e) => e.document)).toEqual([{ user_id: user._id, method: 'totp' }]);
    });

    it('is for the user itself with an unscoped token: another user, an application or a scoped token get 403', async () => {
      const { user, session } = await createSignedInUser(t(), suite.tenant.admin, { permissions: ['users.read'] });
      const { session: other } = await createSignedInUser(t(), suite.tenant.admin);
      expectErrorBody(await as(t(), other).post(`${mfaPath(user._id)}/totp`, { current_password: user.password }), 403, 'AccessDenied');
      expectErrorBody(await as(t(), suite.tenant.admin).post(`${mfaPath(user._id)}/totp`, {}), 403, 'AccessDenied');
      const scoped = await t().http().post('/generate-token').set('Authorization', session.auth).send({ scopes: ['users.read'] });
      expect(scoped.status).toBe(201);
      const asScoped = as(t(), `Bearer ${scoped.body.access_token}`);
      expectErrorBody(await asScoped.post(`${mfaPath(user._id)}/totp`, { current_password: user.password }), 403, 'AccessDenied');
      // Another membership's token: 403 as everywhere.
      expectErrorBody(await as(t(), suite.other.admin).get(mfaPath(user._id)), 403, 'AccessDenied');
    });
  });

  describe('the second step of sign-in', () => {
    it('answers 401 MfaRequired after the right password only, with no token and no TokenGenerated', async () => {
      const { user } = await userWithTotp();
      const before = await queryEvents(t(), suite.tenant.admin, { event_type: 'TokenGenerated', 'document.user._id': user._id });
      const res = await firstStep(user.username, user.password);
      expectMfaRequired(res, { mfa_methods: ['totp', 'recovery_code'] });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="portcullis"');
      secrets.push(res.body.mfa_token);
      expect(await queryEvents(t(), suite.tenant.admin, { event_type: 'TokenGenerated', 'document.user._id': user._id })).toHaveLength(before.length);
      // A wrong password answers as before: the second step tells a guesser nothing.
      expectErrorBody(await firstStep(user.username, 'wrong password!'), 401, 'InvalidCredentials');
    });

    it('takes the previous, current and next step, refuses a step once used (replay), and puts amr in the tokens', async () => {
      // userWithTotp confirmed with the previous step's code: accepted, and now used.
      const { user, secret } = await userWithTotp();
      const now = currentStep();
      expectErrorBody(await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), totp: totpAt(secret, now - 1) }), 400, 'MfaCodeInvalid');
      // Two steps away: out of the window.
      expectErrorBody(await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), totp: totpAt(secret, now + 3) }), 400, 'MfaCodeInvalid');

      const first = await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), totp: totpAt(secret, now) });
      expect(first.status).toBe(201);
      expect(claimsOf(first.body.access_token).amr).toEqual(['pwd', 'otp', 'mfa']);
      expect(claimsOf(first.body.refresh_token).amr).toEqual(['pwd', 'otp', 'mfa']);

      // The same code again, on a new sign-in: refused (no replay).
      expectErrorBody(await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), totp: totpAt(secret, now) }), 400, 'MfaCodeInvalid');
      const next = await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), totp: totpAt(secret, now + 1) });
      expect(next.status).toBe(201);
      // A step before the last one accepted is refused too.
      expectErrorBody(await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), totp: totpAt(secret, now) }), 400, 'MfaCodeInvalid');

      const generated = await queryEvents(t(), suite.tenant.admin, { event_type: 'TokenGenerated', 'document.user._id': user._id });
      expect(generated.map((e) => e.document.amr)).toContainEqual(['pwd', 'otp', 'mfa']);
      expect(generated.find((e) => e.document.amr)?.document.grant).toBe('password');
    });

    it('keeps amr through refresh, scoped tokens and /verify-token', async () => {
      const { user, secret } = await userWithTotp();
      const pair = await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), totp: totpAt(secret, currentStep()) });
      expect(pair.status).toBe(201);
      const refreshed = await t().http().get('/refresh-token').set('Authorization', `Bearer ${pair.body.refresh_token}`);
      expect(refreshed.status).toBe(201);
      expect(claimsOf(refreshed.body.access_token).amr).toEqual(['pwd', 'otp', 'mfa']);
      const scoped = await t().http().post('/generate-token').set('Authorization', `Bearer ${refreshed.body.access_token}`).send({ scopes: ['users.read'] });
      expect(scoped.status).toBe(201);
      expect(claimsOf(scoped.body.access_token).amr).toEqual(['pwd', 'otp', 'mfa']);
      const verified = await t().http().post('/verify-token').send({ token: scoped.body.access_token });
      expect(verified.body.amr).toEqual(['pwd', 'otp', 'mfa']);
      // A password-only session says so.
      const { session } = await createSignedInUser(t(), suite.tenant.admin);
      expect(claimsOf(session.accessToken).amr).toEqual(['pwd']);
      expect((await t().http().get('/verify-token').set('Authorization', session.auth)).body.amr).toEqual(['pwd']);
    });

    it('makes the mfa_token single use, good for five tries, and useless anywhere else', async () => {
      const { user, secret } = await userWithTotp();
      const token = await mfaTokenOf(user.username, user.password);
      // Not a token of any other route.
      expectErrorBody(await t().http().get('/me').set('Authorization', `Bearer ${token}`), 401, 'InvalidToken');
      expectErrorBody(await t().http().get('/refresh-token').set('Authorization', `Bearer ${token}`), 401, 'InvalidToken');
      expectErrorBody(await t().http().post('/verify-token').send({ token }), 401, 'InvalidToken');
      // Exactly one factor.
      expectErrorBody(await secondStep({ mfa_token: token }), 400, 'ModelValidationError');
      expectErrorBody(await secondStep({ mfa_token: token, totp: '000000', recovery_code: 'BCDFGHJKLM' }), 400, 'ModelValidationError');
      const right = await secondStep({ mfa_token: token, totp: totpAt(secret, currentStep()) });
      expect(right.status).toBe(201);
      expectErrorBody(await secondStep({ mfa_token: token, totp: totpAt(secret, currentStep() + 1) }), 401, 'InvalidToken');

      const worn = await mfaTokenOf(user.username, user.password);
      const wrong = totpAt(secret, currentStep() + 7);
      for (let i = 0; i < 4; i++) expectErrorBody(await secondStep({ mfa_token: worn, totp: wrong }), 400, 'MfaCodeInvalid');
      expectErrorBody(await secondStep({ mfa_token: worn, totp: wrong }), 401, 'InvalidToken');
      expectErrorBody(await secondStep({ mfa_token: worn, totp: totpAt(secret, currentStep() + 1) }), 401, 'InvalidToken');

      // Forged: unknown random part, another membership's prefix, garbage.
      const forged = `${m()}.${Buffer.alloc(32, 7).toString('base64url')}`;
      expectErrorBody(await secondStep({ mfa_token: forged, totp: '123456' }), 401, 'InvalidToken');
      expectErrorBody(await secondStep({ mfa_token: token.replace(m(), suite.other.membershipId), totp: '123456' }), 401, 'InvalidToken');
      expectErrorBody(await secondStep({ mfa_token: 'x'.repeat(200), totp: '123456' }), 401, 'InvalidToken');
      expectErrorBody(await secondStep({ mfa_token: 'x'.repeat(300), totp: '123456' }), 400, 'ModelValidationError');
    });

    it('takes a recovery code once, typed any way, and records UserMfaRecoveryCodeUsed', async () => {
      const { user, session, recoveryCodes } = await userWithTotp();
      const code = recoveryCodes[3];
      const typed = `${code.slice(0, 5).toLowerCase()}-${code.slice(5)}`;
      const res = await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), recovery_code: typed });
      expect(res.status).toBe(201);
      expect(claimsOf(res.body.access_token).amr).toEqual(['pwd', 'otp', 'mfa']);
      expectErrorBody(await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), recovery_code: code }), 400, 'MfaCodeInvalid');
      expect((await as(t(), session).get(mfaPath(user._id))).body.recovery_codes_left).toBe(9);
      const used = await queryEvents(t(), suite.tenant.admin, { event_type: 'UserMfaRecoveryCodeUsed', 'document.user_id': user._id });
      expect(used.map((e) => e.document)).toEqual([{ user_id: user._id, method: 'recovery_codes' }]);

      // New codes void the old ones.
      const renewed = await as(t(), session).post(`${mfaPath(user._id)}/recovery-codes`, { current_password: user.password });
      expect(renewed.status).toBe(200);
      secrets.push(...renewed.body.recovery_codes);
      expectErrorBody(await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), recovery_code: recoveryCodes[0] }), 400, 'MfaCodeInvalid');
      const fresh = await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), recovery_code: renewed.body.recovery_codes[0] });
      expect(fresh.status).toBe(201);
    });
  });

  describe('parallel second steps', () => {
    it('spend one recovery code: the requests that lose the mfa_token race keep theirs', async () => {
      const { user, session, recoveryCodes } = await userWithTotp();
      const token = await mfaTokenOf(user.username, user.password);
      const answers = await Promise.all(recoveryCodes.slice(0, 8).map((code) => secondStep({ mfa_token: token, recovery_code: code })));
      expect(answers.filter((res) => res.status === 201)).toHaveLength(1);
      for (const lost of answers.filter((res) => res.status !== 201)) expectErrorBody(lost, 401, 'InvalidToken');
      expect((await as(t(), session).get(mfaPath(user._id))).body.recovery_codes_left).toBe(9);
    });

    it('a password changed once the step has used its mfa_token opens no session: 401 InvalidToken', async () => {
      const { user, secret } = await userWithTotp();
      const token = await mfaTokenOf(user.username, user.password);
      // Held after the factor passed and the token was used up, before the session opens: the
      // change finds no sign-in under way to end, so only the opening itself can refuse.
      const sessions = t().app.get(SignInSessions);
      const complete = sessions.completeSecondStep.bind(sessions);
      const reached = deferred();
      const hold = deferred();
      const spy = jest.spyOn(sessions, 'completeSecondStep').mockImplementationOnce(async (...args) => {
        reached.release();
        await hold.promise;
        return complete(...args);
      });
      try {
        const answer = secondStep({ mfa_token: token, totp: totpAt(secret, currentStep()) }).then((res) => res);
        await settles(reached.promise, 'the second step past its used-up mfa_token');
        const newPassword = 'changed during the second step';
        expect((await as(t(), suite.tenant.admin).put(`/memberships/${m()}/users/${user._id}/change-password`, { password: newPassword })).status).toBe(204);
        hold.release();
        expectErrorBody(await answer, 401, 'InvalidToken');
        expect((await firstStep(user.username, newPassword)).body.errorCode).toBe('MfaRequired');
      } finally {
        spy.mockRestore();
      }
    });
  });

  describe('removing factors', () => {
    it('lets the user remove its TOTP with its password, and then signs in with the password alone', async () => {
      const { user, session } = await userWithTotp();
      const call = as(t(), session);
      expectErrorBody(await call.del(`${mfaPath(user._id)}/totp`, {}), 400, 'ModelValidationError');
      expectErrorBody(await call.del(`${mfaPath(user._id)}/totp`, { current_password: 'wrong password!' }), 400, 'InvalidCurrentPassword');
      expect((await call.del(`${mfaPath(user._id)}/totp`, { current_password: user.password })).status).toBe(204);
      expect((await call.get(mfaPath(user._id))).body).toEqual({ totp: { enabled: false }, webauthn: [], recovery_codes_left: 0 });
      const res = await firstStep(user.username, user.password);
      expect(res.status).toBe(201);
      const disabled = await queryEvents(t(), suite.tenant.admin, { event_type: 'UserMfaDisabled', 'document.user_id': user._id });
      expect(disabled.map((e) => e.document)).toEqual([{ user_id: user._id, method: 'totp' }]);
    });

    it("an administrator's reset removes every factor and revokes every session of the user (reason mfa_reset)", async () => {
      const { user, session } = await userWithTotp();
      // The user itself may not use the reset route on its own record.
      expectErrorBody(await as(t(), session).del(mfaPath(user._id)), 403, 'AccessDenied');
      const reset = await as(t(), suite.tenant.admin).del(mfaPath(user._id));
      expect(reset.status).toBe(204);
      expectErrorBody(await t().http().get('/me').set('Authorization', session.auth), 401, 'TokenWasRevoked');
      const revoked = await queryEvents(t(), suite.tenant.admin, { event_type: 'TokenRevoked', 'document.user_id': user._id });
      expect(revoked.map((e) => e.document.reason)).toContain('mfa_reset');
      const disabled = await queryEvents(t(), suite.tenant.admin, { event_type: 'UserMfaDisabled', 'document.user_id': user._id });
      expect(disabled.map((e) => e.document)).toEqual([{ user_id: user._id, method: 'all' }]);
      expect((await firstStep(user.username, user.password)).status).toBe(201);
      expectErrorBody(await as(t(), suite.tenant.admin).del(mfaPath('0c5d6a3c-0000-4000-8000-000000000000')), 404, 'UserNotFound');
    });
  });

  describe('a password reset', () => {
    it('keeps the factors: the new password is still only the first step', async () => {
      await updateMembership(t(), suite.tenant, { mail_providers: [loopbackSmtpProvider(catcher.port)] });
      await createMailhook(t(), suite.tenant.admin, {
        name: unique('Reset'),
        event: 'UserPasswordReset',
        mail_subject: 'Reset',
        mail_template: '<a href="https://app.example/reset?token={{reset_token}}">reset</a>',
        send_to_utilizer: true,
      });
      const { user, secret } = await userWithTotp();
      const requested = await t().http().post(`/memberships/${m()}/users/reset-password`).send({ username: user.username });
      expect(requested.status).toBe(202);
      const mail = await eventually(async () => catcher.mailsTo(user.email_address)[0], 'the reset mail', 10_000);
      const resetToken = /token=([\w.-]+)"/.exec(mail.body)?.[1] ?? '';
      secrets.push(resetToken);
      const newPassword = 'a brand new password';
      expect((await t().http().post(`/memberships/${m()}/users/set-password`).send({ reset_token: resetToken, password: newPassword })).status).toBe(204);
      const token = await mfaTokenOf(user.username, newPassword);
      const done = await secondStep({ mfa_token: token, totp: totpAt(secret, currentStep()) });
      expect(done.status).toBe(201);
      expect((await as(t(), `Bearer ${done.body.access_token}`).get(mfaPath(user._id))).body.totp.enabled).toBe(true);
    });
  });

  describe('mfa_policy required', () => {
    it('enrolls TOTP at sign-in and answers the tokens with recovery codes; a PUT without mfa_policy keeps it', async () => {
      const tenantAdmin = suite.other.admin;
      const membershipPath = `/memberships/${tenantAdmin.membershipId}`;
      const current = (await as(t(), tenantAdmin).get(membershipPath)).body;
      expect(current.mfa_policy).toBe('optional');
      const put = await as(t(), tenantAdmin).put(membershipPath, { name: current.name, mfa_policy: 'required' });
      expect(put.status).toBe(200);
      expect(put.body.mfa_policy).toBe('required');
      const kept = await as(t(), tenantAdmin).put(membershipPath, { name: current.name, expires_in: 1800 });
      expect(kept.body.mfa_policy).toBe('required');
      expectErrorBody(await as(t(), tenantAdmin).put(membershipPath, { name: current.name, mfa_policy: 'sometimes' }), 400, 'ModelValidationError');

      const user = await createUser(t(), tenantAdmin);
      const res = await firstStep(user.username, user.password, tenantAdmin.membershipId);
      expectMfaRequired(res, { mfa_methods: [], enroll: ['totp'] });
      const token = res.body.mfa_token as string;
      secrets.push(token);
      // No factor yet: a code cannot pass before enrollment.
      expectErrorBody(await secondStep({ mfa_token: token, totp: '123456' }), 400, 'MfaCodeInvalid');
      const enroll = await t().http().post('/generate-token/mfa/totp').send({ mfa_token: token });
      expect(enroll.status).toBe(201);
      const secret = enroll.body.secret as string;
      secrets.push(secret);
      expect(enroll.body.otpauth_uri).toContain(`secret=${secret}&issuer=`);
      await awayFromStepEdge();
      // The previous step's code is accepted here too.
      const done = await secondStep({ mfa_token: token, totp: totpAt(secret, currentStep() - 1) });
      expect(done.status).toBe(201);
      expect(done.body).toEqual(expect.objectContaining({ token_type: 'Bearer', access_token: expect.any(String), refresh_token: expect.any(String) }));
      expect(done.body.recovery_codes).toHaveLength(10);
      secrets.push(...done.body.recovery_codes);
      expect(claimsOf(done.body.access_token).amr).toEqual(['pwd', 'otp', 'mfa']);
      const state = await t().http().get(`${membershipPath}/users/${user._id}/mfa`).set('Authorization', `Bearer ${done.body.access_token}`);
      expect(state.body).toMatchObject({ totp: { enabled: true }, recovery_codes_left: 10 });
      // From now on the user signs in with its factor.
      const again = await firstStep(user.username, user.password, tenantAdmin.membershipId);
      expect(again.body.mfa_methods).toEqual(['totp', 'recovery_code']);
      expect(again.body.enroll).toBeUndefined();
      secrets.push(again.body.mfa_token);
      // The enrollment route is for users without a factor only.
      expectErrorBody(await t().http().post('/generate-token/mfa/totp').send({ mfa_token: again.body.mfa_token }), 400, 'ModelValidationError');
      await as(t(), tenantAdmin).put(membershipPath, { name: current.name, mfa_policy: 'optional' });
    });
    it('of sign-ins enrolling at the same time, one enables its secret; the others are refused and change nothing', async () => {
      const tenantAdmin = suite.other.admin;
      const membershipPath = `/memberships/${tenantAdmin.membershipId}`;
      const current = (await as(t(), tenantAdmin).get(membershipPath)).body;
      expect((await as(t(), tenantAdmin).put(membershipPath, { name: current.name, mfa_policy: 'required' })).status).toBe(200);
      try {
        const user = await createUser(t(), tenantAdmin);
        // Three: more attempts of one login in flight than the sign-in policy's max_failures are refused (429).
        const enrollments = await Promise.all(
          Array.from({ length: 3 }, async () => {
            const first = await firstStep(user.username, user.password, tenantAdmin.membershipId);
            expectMfaRequired(first, { mfa_methods: [], enroll: ['totp'] });
            const enroll = await t().http().post('/generate-token/mfa/totp').send({ mfa_token: first.body.mfa_token });
            expect(enroll.status).toBe(201);
            secrets.push(first.body.mfa_token, enroll.body.secret);
            return { token: first.body.mfa_token as string, secret: enroll.body.secret as string };
          }),
        );
        await awayFromStepEdge();
        const answers = await Promise.all(enrollments.map(({ token, secret }) => secondStep({ mfa_token: token, totp: totpAt(secret, currentStep()) })));
        const winners = answers.flatMap((answer, index) => (answer.status === 201 ? [index] : []));
        // Each later one had overwritten the secret and the recovery codes an earlier one was shown.
        expect(winners).toHaveLength(1);
        for (const answer of answers) if (answer.status !== 201) expectErrorBody(answer, 400, 'MfaCodeInvalid');
        const winner = answers[winners[0]];
        secrets.push(...winner.body.recovery_codes);
        // The secret enabled is the winner's, and so are the recovery codes.
        const next = await firstStep(user.username, user.password, tenantAdmin.membershipId);
        expectMfaRequired(next, { mfa_methods: ['totp', 'recovery_code'] });
        const { secret } = enrollments[winners[0]];
        const loserSecret = enrollments.find((_, index) => index !== winners[0])!.secret;
        expectErrorBody(await secondStep({ mfa_token: next.body.mfa_token, totp: totpAt(loserSecret, currentStep() + 1) }), 400, 'MfaCodeInvalid');
        expect((await secondStep({ mfa_token: next.body.mfa_token, totp: totpAt(secret, currentStep() + 1) })).status).toBe(201);
        const byCode = await firstStep(user.username, user.password, tenantAdmin.membershipId);
        expect((await secondStep({ mfa_token: byCode.body.mfa_token, recovery_code: winner.body.recovery_codes[0] })).status).toBe(201);
      } finally {
        await as(t(), tenantAdmin).put(membershipPath, { name: current.name, mfa_policy: 'optional' });
      }
    });
  });

  describe('device approval', () => {
    it('needs a session that passed its factor; the device pair keeps its amr', async () => {
      const { user, session, secret } = await userWithTotp();
      const codes = `/memberships/${m()}/codes`;
      const created = await t().http().post(codes).send({ client_info: { name: 'TV' } });
      expect(created.status).toBe(201);
      secrets.push(created.body.device_code);
      // The session opened before TOTP was enabled did not pass it.
      expectErrorBody(await as(t(), session).post(`${codes}/${created.body.user_code}/approve`), 403, 'AccessDenied');
      const strong = await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), totp: totpAt(secret, currentStep()) });
      const approved = await as(t(), `Bearer ${strong.body.access_token}`).post(`${codes}/${created.body.user_code}/approve`);
      expect(approved.status).toBe(200);
      const pair = await t().http().post(`${codes}/token`).send({ device_code: created.body.device_code });
      expect(pair.status).toBe(201);
      expect(claimsOf(pair.body.access_token).amr).toEqual(['pwd', 'otp', 'mfa']);
      const refreshed = await t().http().get('/refresh-token').set('Authorization', `Bearer ${pair.body.refresh_token}`);
      expect(claimsOf(refreshed.body.access_token).amr).toEqual(['pwd', 'otp', 'mfa']);
    });

    it('an MFA reset denies the codes the user approved and no device polled yet (a user-wide trigger)', async () => {
      const { user, secret } = await userWithTotp();
      const codes = `/memberships/${m()}/codes`;
      const created = await t().http().post(codes).send({ client_info: { name: 'TV' } });
      secrets.push(created.body.device_code);
      const strong = await secondStep({ mfa_token: await mfaTokenOf(user.username, user.password), totp: totpAt(secret, currentStep()) });
      expect((await as(t(), `Bearer ${strong.body.access_token}`).post(`${codes}/${created.body.user_code}/approve`)).status).toBe(200);

      expect((await as(t(), suite.tenant.admin).del(mfaPath(user._id))).status).toBe(204);
      expectErrorBody(await t().http().post(`${codes}/token`).send({ device_code: created.body.device_code }), 400, 'AuthorizationDenied');
    });
  });

  describe('a provider sign-in', () => {
    let oidc: OidcTestProvider;
    let signingKey: Awaited<ReturnType<typeof newSigningKey>>;
    const CLIENT_ID = 'mfa-test-client';
    beforeAll(async () => {
      signingKey = await newSigningKey('mfa-key');
      oidc = await startOidcProvider({ keys: [signingKey.privateJwk], clients: [{ client_id: CLIENT_ID, client_secret: 'unused-secret-0123456789abcdef', redirect_uris: ['http://127.0.0.1:9/cb'] }], accounts: {} });
    });
    afterAll(async () => oidc?.stop());

    const idToken = (sub: string, email: string, extra: Record<string, unknown> = {}) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ email, email_verified: true, ...extra })
        .setProtectedHeader({ alg: 'RS256', kid: 'mfa-key' })
        .setIssuer(oidc.issuer)
        .setAudience(CLIENT_ID)
        .setSubject(sub)
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(signingKey.privateKey);
    };

    it('asks for the local factor, whatever MFA the provider claims, and the session carries amr without pwd', async () => {
      const provider = await as(t(), suite.tenant.admin).post(`/memberships/${m()}/providers`, { name: unique('Local OIDC'), type: 'oidc', issuer: oidc.issuer, client_id: CLIENT_ID });
      expect(provider.status).toBe(201);
      const login = async (extra: Record<string, unknown> = {}) =>
        t().http().post(`/oauth/${provider.body.slug}/login?membership_id=${m()}`).send({ id_token: await idToken('mfa-sub', 'mfa.provider@example.com', extra) });

      const first = await login();
      expect(first.status).toBe(201);
      expect(claimsOf(first.body.access_token).amr).toBeUndefined();
      const me = await t().http().get('/me').set('Authorization', `Bearer ${first.body.access_token}`);
      const userId = me.body._id as string;
      // The user gets a password from an administrator and enrolls TOTP with it.
      const password = 'a password set by the admin';
      expect((await as(t(), suite.tenant.admin).put(`/memberships/${m()}/users/${userId}/change-password`, { password })).status).toBe(204);
      // The change ended the first session: a new provider sign-in (still one step: no factor yet).
      const second = await login();
      expect(second.status).toBe(201);
      const call = as(t(), `Bearer ${second.body.access_token}`);
      const started = await call.post(`${mfaPath(userId)}/totp`, { current_password: password });
      secrets.push(started.body.secret);
      await awayFromStepEdge();
      expect((await call.post(`${mfaPath(userId)}/totp/confirm`, { code: totpAt(started.body.secret, currentStep()) })).status).toBe(200);

      const asked = await login({ amr: ['mfa', 'otp'], acr: 'urn:mfa' });
      expect({ status: asked.status, code: asked.body.errorCode, methods: asked.body.mfa_methods }).toEqual({ status: 401, code: 'MfaRequired', methods: ['totp', 'recovery_code'] });
      secrets.push(asked.body.mfa_token);
      const done = await secondStep({ mfa_token: asked.body.mfa_token, totp: totpAt(started.body.secret, currentStep() + 1) });
      expect(done.status).toBe(201);
      expect(claimsOf(done.body.access_token).amr).toEqual(['otp', 'mfa']);
      const generated = await queryEvents(t(), suite.tenant.admin, { event_type: 'TokenGenerated', 'document.user._id': userId });
      expect(generated.map((e) => e.document)).toContainEqual(expect.objectContaining({ grant: 'provider', provider: provider.body.slug, amr: ['otp', 'mfa'] }));
    });

    it('lets a user with no password of its own manage its factors in a session signed in within 10 minutes', async () => {
      const provider = await as(t(), suite.tenant.admin).post(`/memberships/${m()}/providers`, { name: unique('No password OIDC'), type: 'oidc', issuer: oidc.issuer, client_id: CLIENT_ID });
      expect(provider.status).toBe(201);
      const signedIn = await t()
        .http()
        .post(`/oauth/${provider.body.slug}/login?membership_id=${m()}`)
        .send({ id_token: await idToken('no-password-sub', 'no.password@example.com') });
      expect(signedIn.status).toBe(201);
      const userId = claimsOf(signedIn.body.access_token).sub as string;
      const call = as(t(), `Bearer ${signedIn.body.access_token}`);

      const started = await call.post(`${mfaPath(userId)}/totp`, {});
      expect(started.status).toBe(201);
      secrets.push(started.body.secret);
      await awayFromStepEdge();
      const confirmed = await call.post(`${mfaPath(userId)}/totp/confirm`, { code: totpAt(started.body.secret, currentStep()) });
      expect(confirmed.status).toBe(200);
      secrets.push(...(confirmed.body.recovery_codes as string[]));
      // No password verifies against none: a guess is a wrong current password, counted as ever.
      expectErrorBody(await call.post(`${mfaPath(userId)}/recovery-codes`, { current_password: 'a guessed password' }), 400, 'InvalidCurrentPassword');

      // The proof is the sign-in's time, which a refresh does not move: past 10 minutes, sign in again.
      const database = t().app.get<Database>(DATABASE);
      const sessionId = claimsOf(signedIn.body.access_token).sid as string;
      await database.db.update(sessions).set({ createdAt: new Date(Date.now() - 11 * 60_000) }).where(eq(sessions.id, sessionId));
      const refreshed = await t().http().post('/refresh-token').send({ token: signedIn.body.refresh_token });
      expect(refreshed.status).toBe(201);
      const stale = await as(t(), `Bearer ${refreshed.body.access_token}`).post(`${mfaPath(userId)}/recovery-codes`, {});
      expectErrorBody(stale, 403, 'AccessDenied');
      expect(stale.body.message).toContain('sign in again');
      expect((await as(t(), `Bearer ${refreshed.body.access_token}`).get(mfaPath(userId))).body.totp).toEqual({ enabled: true, created_at: expect.any(String) });
    });

    it('a device code approved by a stale session opens no fresh sign-in: its pair cannot manage factors without a password', async () => {
      const provider = await as(t(), suite.tenant.admin).post(`/memberships/${m()}/providers`, { name: unique('Device OIDC'), type: 'oidc', issuer: oidc.issuer, client_id: CLIENT_ID });
      expect(provider.status).toBe(201);
      const signedIn = await t()
        .http()
        .post(`/oauth/${provider.body.slug}/login?membership_id=${m()}`)
        .send({ id_token: await idToken('device-stale-sub', 'device.stale@example.com') });
      expect(signedIn.status).toBe(201);
      const userId = claimsOf(signedIn.body.access_token).sub as string;
      // The session's sign-in is past the 10 minutes: it may no longer manage factors.
      const database = t().app.get<Database>(DATABASE);
      await database.db.update(sessions).set({ createdAt: new Date(Date.now() - 11 * 60_000) }).where(eq(sessions.id, claimsOf(signedIn.body.access_token).sid as string));
      expectErrorBody(await as(t(), `Bearer ${signedIn.body.access_token}`).post(`${mfaPath(userId)}/totp`, {}), 403, 'AccessDenied');

      // The same stale token approves a device code of its own: the device's pair is a new session, but no new sign-in.
      const code = await t().http().post(`/memberships/${m()}/codes`).send({ client_info: { name: 'Attacker laptop' } });
      expect(code.status).toBe(201);
      expect((await t().http().post(`/memberships/${m()}/codes/${code.body.user_code}/approve`).set('Authorization', `Bearer ${signedIn.body.access_token}`).send()).status).toBe(200);
      const pair = await t().http().post(`/memberships/${m()}/codes/token`).send({ device_code: code.body.device_code });
      expect(pair.status).toBe(201);
      const started = await as(t(), `Bearer ${pair.body.access_token}`).post(`${mfaPath(userId)}/totp`, {});
      if (started.status === 201) secrets.push(started.body.secret);
      expectErrorBody(started, 403, 'AccessDenied');
    });
  });

  // Last: it reads what every test above left behind.
  describe('afterwards', () => {
  it('shows no TOTP secret, recovery code, device code or mfa_token in any log line (trace), event, webhook or list', async () => {
    expect(secrets.length).toBeGreaterThan(20);
    expect(secrets.every((secret) => typeof secret === 'string' && secret.length >= 10)).toBe(true);
    await receiver.waitForRequests(5);
    const everything = [
      log.text(),
      JSON.stringify(await queryEvents(t(), suite.tenant.admin, {}, { limit: '1000' })),
      JSON.stringify(await queryEvents(t(), suite.other.admin, {}, { limit: '1000' })),
      JSON.stringify(receiver.requests.map((r) => r.body)),
      JSON.stringify((await as(t(), suite.tenant.admin).get(`/memberships/${m()}/users?limit=1000`)).body),
      JSON.stringify((await as(t(), suite.tenant.admin).get(`/memberships/${m()}/active-tokens?limit=1000`)).body),
    ].join('\n');
    expect(log.lines().length).toBeGreaterThan(0);
    for (const secret of secrets) {
      expect(everything).not.toContain(secret);
      // Recovery codes and mfa_tokens never in any casing or digest-free form.
      expect(everything.toUpperCase()).not.toContain(secret.toUpperCase());
    }
    const mfaEvents = JSON.parse(JSON.stringify(await queryEvents(t(), suite.tenant.admin, { event_type: { $in: ['UserMfaEnabled', 'UserMfaDisabled', 'UserMfaRecoveryCodeUsed'] } }))) as ApiObject[];
    expect(mfaEvents.length).toBeGreaterThan(5);
    for (const event of mfaEvents) expect(Object.keys(event.document).sort()).toEqual(['method', 'user_id']);
  });
});
});
