import { randomBytes } from 'node:crypto';
import { type BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { DomainError, validationError } from '../common/errors';
import { newId } from '../common/ids';
import { LOGGER } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { MembershipRow, UserRow } from '../database/schema';
import { EventRecorder, type MailOnlyValues } from '../events/event-recorder';
import { SYSTEM_UTILIZER } from '../events/event-types';
import { MembershipCache } from '../memberships/membership-cache';
import { settleWithin } from '../queue/settle-within';
import { PasswordChange } from '../users/password-change';
import { toUserResponse } from '../users/user.mapper';
import { UserRepository } from '../users/user.repository';
import { SIGN_IN_ATTEMPTS, type SignInAttempt, type SignInAttempts } from '../sign-in/sign-in-attempts';
import { SignInDefenses } from '../sign-in/sign-in-defenses';
import { ChallengeTokens, invalidChallengeToken } from './challenge-tokens';
import { drawOtp, otpDigest, sameDigest } from './otp';
import { storedOtpSettings } from '../memberships/otp-settings';
import type { ResetLoginDto, SetPasswordDto, VerifyOtpDto } from './recovery.dto';
import { MAX_OTP_ATTEMPTS, UserChallengeRepository } from './user-challenge.repository';

/** The one answer of a reset request, whoever it names. */
export const RESET_ANSWER = Object.freeze({ message: 'If the account exists, a message has been sent' });

/** Revocation reason stored with the sessions a password reset ends. */
export const PASSWORD_RESET_REASON = 'password_reset';

type Login = { emailAddress: string } | { username: string };

const otpInvalid = (): DomainError => new DomainError('OtpInvalid', 'The one-time password is not valid');
const membershipNotFound = (): DomainError => new DomainError('MembershipNotFound', 'The membership does not exist');

/** Exactly one of `email_address` and `username`. */
function loginOf(body: ResetLoginDto): Login {
  const hasEmail = body.email_address !== undefined;
  const hasUsername = body.username !== undefined;
  if (hasEmail === hasUsername) throw validationError(hasEmail ? 'username' : 'email_address', 'send exactly one of email_address and username');
  return body.email_address !== undefined ? { emailAddress: body.email_address } : { username: body.username as string };
}

/**
 * Password reset by mail, one-time passwords, set-password and self-activation (contract "Account
 * recovery, activation and password checks"). Nothing here tells a caller whether a user exists:
 * a reset request is answered before the user is even looked up, and every OTP failure does the
 * same work and answers the same.
 */
@Injectable()
export class RecoveryService implements BeforeApplicationShutdown {
  /** Reset requests answered and still at work; shutdown waits for them. */
  private readonly pendingWork = new Set<Promise<void>>();
  /** Compared when there is no OTP to compare, so a miss costs what a wrong guess costs. */
  private readonly decoy = { userId: newId(), challengeId: newId(), digest: randomBytes(32).toString('hex') };

  constructor(
    private readonly memberships: MembershipCache,
    private readonly users: UserRepository,
    private readonly challenges: UserChallengeRepository,
    private readonly tokens: ChallengeTokens,
    private readonly passwords: PasswordChange,
    private readonly events: EventRecorder,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(SIGN_IN_ATTEMPTS) private readonly attempts: SignInAttempts,
    private readonly defenses: SignInDefenses,
  ) {}

  /** Answers at once; the lookup and the work run after the answer has gone out. */
  async requestReset(membershipId: string, body: ResetLoginDto): Promise<typeof RESET_ANSWER> {
    const login = loginOf(body);
    const membership = await this.requireMembership(membershipId);
    setImmediate(() => this.track(this.resetInBackground(membership, login)));
    return RESET_ANSWER;
  }

  async verifyOtp(body: VerifyOtpDto, clientAddress: string): Promise<{ reset_token: string; expires_in: number }> {
    const login = loginOf(body);
    const membership = await this.requireMembership(body.membership_id);
    const user = await this.findUser(membership.id, login);
    // Every OtpInvalid is a failed sign-in of its login (contract "OTP guesses count"); an unknown
    // name counts and locks under its lower-cased name, as at sign-in.
    const name = 'emailAddress' in login ? login.emailAddress : login.username;
    const signIn: SignInAttempt = { membershipId: membership.id, login: user ? { userId: user.id } : { unknownName: name.toLowerCase() }, address: clientAddress };
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
    const lifetime = this.config.resetTokenExpiresIn;
    const issued = this.tokens.issue(membership, user.id, 'reset', lifetime);
    if (!(await this.challenges.exchangeOtp(attempt.id, attempt.otpDigest, issued.jti, issued.expiresAt))) {
      await this.attempts.recordFailure(signIn);
      throw otpInvalid();
    }
    await this.attempts.recordSuccess(signIn);
    return { reset_token: issued.token, expires_in: lifetime };
  }

  /**
   * One transaction: the reset is used up, the hash replaced, every session of the user revoked
   * and UserPasswordChanged recorded. An inactive user's token is kept (401 UserInactive).
   */
  async setPassword(membershipId: string, body: SetPasswordDto): Promise<void> {
    const membership = await this.requireMembership(membershipId);
    const claims = this.tokens.verify(membership, body.reset_token, 'reset');
    // Cheap checks first, so a token that cannot work costs no password hash.
    const user = await this.users.findById(membership.id, claims.sub);
    if (!user || !(await this.challenges.isPending(membership.id, user.id, 'reset', claims.jti))) throw invalidChallengeToken();
    if (!user.isActive) throw userInactive();
    const passwordHash = await this.passwords.hash(body.password);
    await this.events.transaction(async (record) => {
      const locked = await this.users.findByIdForUpdate(membership.id, user.id);
      if (!locked) throw invalidChallengeToken();
      if (!locked.isActive) throw userInactive();
      if (!(await this.challenges.consume(membership.id, user.id, 'reset', claims.jti))) throw invalidChallengeToken();
      const change = { membershipId: membership.id, userId: user.id, passwordHash, utilizerId: user.id, revokeReason: PASSWORD_RESET_REASON };
      if (!(await this.passwords.apply(record, change))) throw invalidChallengeToken();
      // The reset token came by mail (itself, or as the OTP it was exchanged for): the address is proven.
      await this.users.setEmailVerified(membership.id, user.id, locked.emailAddress, new Date());
    });
    // After the commit: the new password is the user's, so its failed sign-ins and any lock end.
    await this.defenses.clearUser(membership.id, user.id);
  }

  /** The user activates itself with the mailed token; an admin activation or freeze has ended the token. */
  async activate(membershipId: string, activationToken: string): Promise<void> {
    const membership = await this.requireMembership(membershipId);
    const claims = this.tokens.verify(membership, activationToken, 'activation');
    await this.events.transaction(async (record) => {
      const locked = await this.users.findByIdForUpdate(membership.id, claims.sub);
      if (!locked || !(await this.challenges.consume(membership.id, locked.id, 'activation', claims.jti))) throw invalidChallengeToken();
      // The activation token came by mail: the address is proven.
      await this.users.setEmailVerified(membership.id, locked.id, locked.emailAddress, new Date());
      if (locked.isActive) return;
      const row = await this.users.update(membership.id, locked.id, { isActive: true, modifiedAt: new Date(), modifiedBy: locked.id });
      if (!row) throw invalidChallengeToken();
      record({ membershipId: membership.id, eventType: 'UserUpdated', utilizerId: locked.id, document: toUserResponse(row), prior: toUserResponse(locked) });
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.pendingWork.size) await settleWithin([...this.pendingWork], this.config.shutdownDrainMs);
  }

  /**
   * An existing active user outside its interval gets a new reset (token, and OTP when enabled)
   * and `UserPasswordReset`, with the token and OTP beside the event for the mail dispatcher.
   */
  private async resetInBackground(membership: MembershipRow, login: Login): Promise<void> {
    const user = await this.findUser(membership.id, login);
    if (!user || !user.isActive) return;
    const otpSettings = storedOtpSettings(membership.otpSettings);
    const lifetime = this.config.resetTokenExpiresIn;
    const interval = this.config.resetMinIntervalSeconds;
    const issued = this.tokens.issue(membership, user.id, 'reset', lifetime);
    const challengeId = newId();
    const otp = otpSettings.enabled ? drawOtp(otpSettings) : null;
    const now = Date.now();
    const otpExpiresAt = otp === null ? null : new Date(now + otpSettings.expires_in * 1000);
    // The row outlives its token while the interval runs, so the interval survives the sweeper.
    const expiresAt = new Date(Math.max(issued.expiresAt.getTime(), otpExpiresAt?.getTime() ?? 0, now + interval * 1000));
    const values: MailOnlyValues = {
      reset_token: issued.token,
      reset_token_expires_in: String(lifetime),
      otp: otp ?? '',
      otp_expires_in: otp === null ? '' : String(otpSettings.expires_in),
    };
    await this.events.transaction(async (record) => {
      const challenge = {
        id: challengeId,
        membershipId: membership.id,
        userId: user.id,
        jti: issued.jti,
        otpDigest: otp === null ? null : otpDigest(membership.secretKey, challengeId, otp),
        otpExpiresAt,
        expiresAt,
      };
      if (!(await this.challenges.replaceReset(challenge, interval))) return;
      record({ membershipId: membership.id, eventType: 'UserPasswordReset', utilizerId: SYSTEM_UTILIZER, document: toUserResponse(user) }, values);
    });
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => {
        // Neither the login nor the token: the request named someone who may not be a user.
        this.logger.error({ err: error }, 'a password reset request failed after it was answered');
      })
      .finally(() => this.pendingWork.delete(tracked));
    this.pendingWork.add(tracked);
  }

  private findUser(membershipId: string, login: Login): Promise<UserRow | undefined> {
    return 'emailAddress' in login ? this.users.findByEmail(membershipId, login.emailAddress) : this.users.findByUsername(membershipId, login.username);
  }

  private async requireMembership(membershipId: string): Promise<MembershipRow> {
    const membership = await this.memberships.get(membershipId);
    if (!membership) throw membershipNotFound();
    return membership;
  }
}

const userInactive = (): DomainError => new DomainError('UserInactive', 'The user account is not active');
