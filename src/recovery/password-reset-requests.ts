import { Inject, Injectable } from '@nestjs/common';
import { newId } from '../common/ids';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { MembershipRow } from '../database/schema';
import { EventRecorder, type MailOnlyValues } from '../events/event-recorder';
import { SYSTEM_UTILIZER } from '../events/event-types';
import { MembershipCache } from '../memberships/membership-cache';
import { storedOtpSettings } from '../memberships/otp-settings';
import { toUserResponse } from '../users/user.mapper';
import { UserRepository } from '../users/user.repository';
import { ChallengeTokens } from './challenge-tokens';
import { drawOtp, otpDigest } from './otp';
import type { ResetLoginDto } from './recovery.dto';
import { findUserByLogin, type Login, loginOf, requireMembership } from './recovery-lookups';
import { UserChallengeRepository } from './user-challenge.repository';
import { WorkAfterAnswer } from './work-after-answer';

/** The one answer of a reset request, whoever it names. */
export const RESET_ANSWER = Object.freeze({ message: 'If the account exists, a message has been sent' });

/**
 * Password reset requests (contract "Account recovery, activation and password checks"): answered
 * before the user is even looked up, so the answer tells no caller whether a user exists. The
 * work goes on after the answer: an existing active user outside RESET_MIN_INTERVAL_SECONDS gets
 * a new reset token, and an OTP when the membership enables them, through the mail hooks.
 */
@Injectable()
export class PasswordResetRequests {
  constructor(
    private readonly memberships: MembershipCache,
    private readonly users: UserRepository,
    private readonly challenges: UserChallengeRepository,
    private readonly tokens: ChallengeTokens,
    private readonly events: EventRecorder,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly afterAnswer: WorkAfterAnswer,
  ) {}

  /** Answers at once; the lookup and the work run after the answer has gone out. */
  async requestReset(membershipId: string, body: ResetLoginDto): Promise<typeof RESET_ANSWER> {
    const login = loginOf(body);
    const membership = await requireMembership(this.memberships, membershipId);
    this.afterAnswer.start(() => this.reset(membership, login), 'a password reset request failed after it was answered');
    return RESET_ANSWER;
  }

  /**
   * An existing active user outside its interval gets a new reset (token, and OTP when enabled)
   * and `UserPasswordReset`, with the token and OTP beside the event for the mail dispatcher.
   */
  private async reset(membership: MembershipRow, login: Login): Promise<void> {
    const user = await findUserByLogin(this.users, membership.id, login);
    if (!user || !user.isActive) return;
    const otpSettings = storedOtpSettings(membership.otpSettings);
    const interval = this.config.resetMinIntervalSeconds;
    const issued = this.tokens.issue(membership, user.id, 'reset');
    const challengeId = newId();
    const otp = otpSettings.enabled ? drawOtp(otpSettings) : null;
    const now = Date.now();
    const otpExpiresAt = otp === null ? null : new Date(now + otpSettings.expires_in * 1000);
    // The row outlives its token while the interval runs, so the interval survives the sweeper.
    const expiresAt = new Date(Math.max(issued.expiresAt.getTime(), otpExpiresAt?.getTime() ?? 0, now + interval * 1000));
    const values: MailOnlyValues = {
      reset_token: issued.token,
      reset_token_expires_in: String(issued.expiresIn),
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
}
