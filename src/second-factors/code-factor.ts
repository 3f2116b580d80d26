import { Inject, Injectable } from '@nestjs/common';
import { EventRecorder } from '../events/event-recorder';
import { MembershipCache } from '../memberships/membership-cache';
import { SIGN_IN_ATTEMPTS, type SignInAttempt, type SignInAttempts } from '../sign-in/sign-in-attempts';
import { factorStanding } from './factor-standing';
import { mfaEvent } from './mfa-events';
import { MfaRepository } from './mfa.repository';
import { recoveryCodeDigest } from './recovery-codes';
import { matchingTotpStep, normalizeTotpCode } from './totp';

/** What a sign-in outside `/generate-token` must ask after the password, for one user. */
export type SecondFactorNeed =
  /** No factor, and the membership does not require one. */
  | 'none'
  /** A TOTP or recovery code can be asked (`codes`), or only a passkey (`passkey_only`). */
  | 'codes'
  | 'passkey_only'
  /** `mfa_policy: required` and the user has no factor yet: enrollment comes first. */
  | 'enrollment';

/**
 * The second factor as a typed code (a TOTP code or a recovery code), for sign-ins that are not
 * `/generate-token`'s two calls (the OpenID Provider's pages). The same rules: the sign-in
 * defenses first, a wrong code a failure of the login, a TOTP step accepted once, a recovery code
 * used once (`UserMfaRecoveryCodeUsed`).
 */
@Injectable()
export class CodeFactor {
  constructor(
    private readonly factors: MfaRepository,
    private readonly memberships: MembershipCache,
    private readonly recorder: EventRecorder,
    @Inject(SIGN_IN_ATTEMPTS) private readonly attempts: SignInAttempts,
  ) {}

  async need(membershipId: string, userId: string): Promise<SecondFactorNeed> {
    const { enabled, required } = await factorStanding(this.factors, this.memberships, membershipId, userId);
    if (!enabled) return required ? 'enrollment' : 'none';
    const state = await this.factors.findState(membershipId, userId);
    return state.mfa?.totpSecret || state.recoveryCodesLeft > 0 ? 'codes' : 'passkey_only';
  }

  /**
   * Whether `code` is the user's current TOTP code or one of its unused recovery codes. Throws
   * `TooManySignInAttempts` while the login or the address is locked. The RFC 8176 method is `otp` for both.
   */
  async verify(attempt: SignInAttempt & { login: { userId: string } }, code: string): Promise<boolean> {
    await this.attempts.assertOpen(attempt);
    const { membershipId } = attempt;
    const { userId } = attempt.login;
    const trimmed = code.trim().slice(0, 64);
    const { mfa } = await this.factors.findState(membershipId, userId);
    let passed = false;
    // A TOTP code as people type it ("123 456"), as the API's second step takes it; else a recovery code.
    if (mfa?.totpSecret && normalizeTotpCode(trimmed) !== undefined) {
      const step = matchingTotpStep(mfa.totpSecret, trimmed);
      passed = step !== undefined && (await this.factors.acceptTotpStep(membershipId, userId, mfa.totpSecret, step));
    } else if (trimmed && (await this.factors.useRecoveryCode(membershipId, userId, recoveryCodeDigest(userId, trimmed)))) {
      passed = true;
      await this.recorder.transaction(async (record) => {
        record(mfaEvent('UserMfaRecoveryCodeUsed', membershipId, userId, 'recovery_codes', userId));
      });
    }
    if (passed) await this.attempts.recordSuccess(attempt);
    else await this.attempts.recordFailure(attempt);
    return passed;
  }
}
