import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import { newId } from '../common/ids';
import { MembershipCache } from '../memberships/membership-cache';
import { SIGN_IN_ATTEMPTS, type SignInAttempt, type SignInAttempts, signInLoginOf } from '../sign-in/sign-in-attempts';
import { UserRepository } from '../users/user.repository';
import { ChallengeTokens } from './challenge-tokens';
import { otpDigest, sameDigest } from './otp';
import type { VerifyOtpDto } from './recovery.dto';
import { findUserByLogin, loginOf, requireMembership } from './recovery-lookups';
import { MAX_OTP_ATTEMPTS, UserChallengeRepository } from './user-challenge.repository';

const otpInvalid = (): DomainError => new DomainError('OtpInvalid', 'The one-time password is not valid');

/**
 * `POST /verify-otp`: a mailed one-time password exchanged for a new reset token, which replaces
 * the mailed one. Every failure does the same work and answers the same, so none tells a caller
 * whether the user exists, and each counts as a failed sign-in of its login.
 */
@Injectable()
export class OtpExchange {
  /** Compared when there is no OTP to compare, so a miss costs what a wrong guess costs. */
  private readonly decoy = { userId: newId(), challengeId: newId(), digest: randomBytes(32).toString('hex') };

  constructor(
    private readonly memberships: MembershipCache,
    private readonly users: UserRepository,
    private readonly challenges: UserChallengeRepository,
    private readonly tokens: ChallengeTokens,
    @Inject(SIGN_IN_ATTEMPTS) private readonly attempts: SignInAttempts,
  ) {}

  async verifyOtp(body: VerifyOtpDto, clientAddress: string): Promise<{ reset_token: string; expires_in: number }> {
    const login = loginOf(body);
    const membership = await requireMembership(this.memberships, body.membership_id);
    const user = await findUserByLogin(this.users, membership.id, login);
    // Every OtpInvalid is a failed sign-in of its login (contract "OTP guesses count"); an unknown
    // name counts and locks under its lower-cased name, as at sign-in.
    const name = 'emailAddress' in login ? login.emailAddress : login.username;
    const signIn: SignInAttempt = { membershipId: membership.id, login: signInLoginOf(user, name), address: clientAddress };
    await this.attempts.assertOpen(signIn);
    // Counted for a user id that matches nothing when the user is unknown: the same statement runs.
    const attempt = await this.challenges.countOtpAttempt(membership.id, user?.id ?? this.decoy.userId);
    const given = otpDigest(membership.secretKey, attempt?.id ?? this.decoy.challengeId, body.otp);
    const matches = sameDigest(given, attempt?.otpDigest ?? this.decoy.digest);
    if (!user || !attempt || !matches) {
      if (attempt && attempt.otpAttempts >= MAX_OTP_ATTEMPTS) await this.challenges.dropOtp(attempt.id, attempt.otpDigest);
      await this.attempts.recordFailure(signIn);
      throw otpInvalid();
    }
    const issued = this.tokens.issue(membership, user.id, 'reset');
    if (!(await this.challenges.exchangeOtp(attempt.id, attempt.otpDigest, issued.jti, issued.expiresAt))) {
      await this.attempts.recordFailure(signIn);
      throw otpInvalid();
    }
    await this.attempts.recordSuccess(signIn);
    return { reset_token: issued.token, expires_in: issued.expiresIn };
  }
}
