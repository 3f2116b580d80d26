import type { Response } from 'supertest';
import { as, createMembership, createSignedInUser, type CreatedMembership, expectErrorBody, updateMembership, useInstallation } from '../support/api';
import { awayFromStepEdge, currentStep, totpAt } from '../support/totp';

/**
 * Where the two halves of the contract meet: a wrong second-factor code and a wrong
 * `current_password` on the MFA routes are failures of the login ("Sign-in defenses"), and a
 * locked login answers 429 at the second step too, whatever the code.
 */
describe('second factors under the sign-in defenses', () => {
  const suite = useInstallation();
  const MAX_FAILURES = 3;

  function expectLocked(res: Response): void {
    expectErrorBody(res, 429, 'TooManySignInAttempts');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  }

  /** A membership that locks after three failures, and a user of it with TOTP enabled. */
  async function userWithTotp() {
    const tenant: CreatedMembership = await createMembership(suite.t, suite.admin);
    await updateMembership(suite.t, tenant, { sign_in_policy: { max_failures: MAX_FAILURES, window_seconds: 900, lock_seconds: 600 } });
    await awayFromStepEdge();
    const { user, session } = await createSignedInUser(suite.t, tenant.admin);
    const call = as(suite.t, session);
    const mfa = `/memberships/${tenant.membershipId}/users/${user._id}/mfa`;
    const started = await call.post(`${mfa}/totp`, { current_password: user.password });
    expect(started.status).toBe(201);
    const secret = started.body.secret as string;
    expect((await call.post(`${mfa}/totp/confirm`, { code: totpAt(secret, currentStep() - 1) })).status).toBe(200);
    return { tenant, user, call, mfa, secret };
  }

  const firstStep = (membershipId: string, username: string, password: string) =>
    suite.t.http().post('/generate-token').set('X-Service-Alias', membershipId).send({ username, password });

  it('counts the right password and the wrong codes after it together: the limit locks the second step and the password sign-in alike', async () => {
    const { tenant, user, secret } = await userWithTotp();
    const first = await firstStep(tenant.membershipId, user.username, user.password);
    expectErrorBody(first, 401, 'MfaRequired');
    const mfaToken = first.body.mfa_token as string;
    const rightCode = totpAt(secret, currentStep());
    const wrongCode = rightCode === '000000' ? '111111' : '000000';

    // The sign-in is not over at the right password: its attempt stays counted, and the codes add to it.
    for (let i = 0; i < MAX_FAILURES - 1; i++) {
      expectErrorBody(await suite.t.http().post('/generate-token/mfa').send({ mfa_token: mfaToken, totp: wrongCode }), 400, 'MfaCodeInvalid');
    }
    // Locked now: the right code does not get through, nor does the right password.
    expectLocked(await suite.t.http().post('/generate-token/mfa').send({ mfa_token: mfaToken, totp: rightCode }));
    expectLocked(await firstStep(tenant.membershipId, user.username, user.password));
  });

  it('a right password does not start the count over while a second factor is due: password and a wrong code, again and again, lock', async () => {
    const { tenant, user, secret } = await userWithTotp();
    const wrongCode = totpAt(secret, currentStep()) === '000000' ? '111111' : '000000';
    const answers: number[] = [];
    for (let cycle = 0; cycle < MAX_FAILURES && !answers.includes(429); cycle++) {
      const first = await firstStep(tenant.membershipId, user.username, user.password);
      answers.push(first.status);
      if (first.status === 401) answers.push((await suite.t.http().post('/generate-token/mfa').send({ mfa_token: first.body.mfa_token, totp: wrongCode })).status);
    }
    // Password (1), wrong code (2), password (3 of 3), then every step is refused before any check.
    expect(answers).toEqual([401, 400, 401, 429]);
    expectLocked(await firstStep(tenant.membershipId, user.username, user.password));
  });

  it('a sign-in that needs no second factor still clears the count', async () => {
    const tenant: CreatedMembership = await createMembership(suite.t, suite.admin);
    await updateMembership(suite.t, tenant, { sign_in_policy: { max_failures: MAX_FAILURES, window_seconds: 900, lock_seconds: 600 } });
    const { user } = await createSignedInUser(suite.t, tenant.admin);
    for (let i = 0; i < MAX_FAILURES + 2; i++) expect((await firstStep(tenant.membershipId, user.username, user.password)).status).toBe(201);
  });

  it('unlocking clears the count: the user then passes both steps', async () => {
    const { tenant, user, secret } = await userWithTotp();
    const mfaToken = (await firstStep(tenant.membershipId, user.username, user.password)).body.mfa_token as string;
    for (let i = 0; i < MAX_FAILURES; i++) await suite.t.http().post('/generate-token/mfa').send({ mfa_token: mfaToken, totp: 'ABCDEF' });
    expectLocked(await firstStep(tenant.membershipId, user.username, user.password));

    const unlocked = await as(suite.t, tenant.admin).post(`/memberships/${tenant.membershipId}/users/${user._id}/unlock`, {});
    expect(unlocked.status).toBe(204);
    const again = await firstStep(tenant.membershipId, user.username, user.password);
    expectErrorBody(again, 401, 'MfaRequired');
    await awayFromStepEdge();
    const done = await suite.t.http().post('/generate-token/mfa').send({ mfa_token: again.body.mfa_token, totp: totpAt(secret, currentStep() + 1) });
    expect(done.status).toBe(201);
    expect(done.body.access_token).toEqual(expect.any(String));
  });

  it('a user-wide trigger ends pending second steps: after logout-all or a password change, an earlier mfa_token opens nothing', async () => {
    const { tenant, user, call, secret } = await userWithTotp();
    const pending = async () => {
      const first = await firstStep(tenant.membershipId, user.username, user.password);
      expectErrorBody(first, 401, 'MfaRequired');
      return first.body.mfa_token as string;
    };
    const complete = async (mfaToken: string) => {
      await awayFromStepEdge();
      return suite.t.http().post('/generate-token/mfa').send({ mfa_token: mfaToken, totp: totpAt(secret, currentStep()) });
    };

    const beforeLogoutAll = await pending();
    expect((await call.get('/revoke-token?logout-all=true')).status).toBe(204);
    expectErrorBody(await complete(beforeLogoutAll), 401, 'InvalidToken');

    const beforePasswordChange = await pending();
    const changed = await as(suite.t, tenant.admin).put(`/memberships/${tenant.membershipId}/users/${user._id}/change-password`, { password: 'a brand new password!' });
    expect(changed.status).toBe(204);
    expectErrorBody(await complete(beforePasswordChange), 401, 'InvalidToken');
  });

  it('counts a wrong current_password on the second-factor routes as a failure of the login', async () => {
    const { tenant, user, call, mfa } = await userWithTotp();
    for (let i = 0; i < MAX_FAILURES; i++) {
      expectErrorBody(await call.post(`${mfa}/recovery-codes`, { current_password: 'not the password at all' }), 400, 'InvalidCurrentPassword');
    }
    expectLocked(await firstStep(tenant.membershipId, user.username, user.password));
  });
});
