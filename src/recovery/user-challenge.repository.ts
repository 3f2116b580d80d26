import { Inject, Injectable } from '@nestjs/common';
import { and, eq, isNotNull, lt, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { userChallenges, type UserChallengeRow } from '../database/schema';

export type ChallengeKind = UserChallengeRow['kind'];

/** Contract: the statement that counts an OTP attempt refuses the sixth. */
export const MAX_OTP_ATTEMPTS = 5;

export interface NewChallenge {
  id: string;
  membershipId: string;
  userId: string;
  jti: string;
  otpDigest: string | null;
  otpExpiresAt: Date | null;
  expiresAt: Date;
}

/** An OTP attempt that was counted: the stored digest to compare and the count including this one. */
export interface CountedOtpAttempt {
  id: string;
  otpDigest: string;
  otpAttempts: number;
}

/** Pending password resets and activations, one of each kind per user. */
@Injectable()
export class UserChallengeRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  /**
   * Replaces the user's pending reset (new id, token and OTP) unless the current one was requested
   * less than `minIntervalSeconds` ago; one statement, so two parallel requests cannot both pass.
   * False when the interval held it back.
   */
  async replaceReset(challenge: NewChallenge, minIntervalSeconds: number): Promise<boolean> {
    const rows = await this.database.db
      .insert(userChallenges)
      .values({ ...challenge, kind: 'reset', otpAttempts: 0, requestedAt: sql`now()` })
      .onConflictDoUpdate({
        target: [userChallenges.userId, userChallenges.kind],
        set: {
          id: sql`excluded.id`,
          jti: sql`excluded.jti`,
          otpDigest: sql`excluded.otp_digest`,
          otpAttempts: 0,
          otpExpiresAt: sql`excluded.otp_expires_at`,
          requestedAt: sql`now()`,
          expiresAt: sql`excluded.expires_at`,
        },
        setWhere: sql`${userChallenges.requestedAt} <= now() - make_interval(secs => ${minIntervalSeconds})`,
      })
      .returning({ id: userChallenges.id });
    return rows.length > 0;
  }

  /** A new activation, replacing any earlier one. */
  async replaceActivation(challenge: Omit<NewChallenge, 'otpDigest' | 'otpExpiresAt'>): Promise<void> {
    await this.database.db
      .insert(userChallenges)
      .values({ ...challenge, kind: 'activation' })
      .onConflictDoUpdate({
        target: [userChallenges.userId, userChallenges.kind],
        set: { id: sql`excluded.id`, jti: sql`excluded.jti`, requestedAt: sql`now()`, expiresAt: sql`excluded.expires_at` },
      });
  }

  /** Whether `jti` is the user's pending token of this kind (a cheap check before hashing a password). */
  async isPending(membershipId: string, userId: string, kind: ChallengeKind, jti: string): Promise<boolean> {
    const rows = await this.database.db
      .select({ id: userChallenges.id })
      .from(userChallenges)
      .where(and(eq(userChallenges.membershipId, membershipId), eq(userChallenges.userId, userId), eq(userChallenges.kind, kind), eq(userChallenges.jti, jti)))
      .limit(1);
    return rows.length > 0;
  }

  /** Single use: deletes the challenge only while `jti` is its token. False when it was used or replaced. */
  async consume(membershipId: string, userId: string, kind: ChallengeKind, jti: string): Promise<boolean> {
    const rows = await this.database.db
      .delete(userChallenges)
      .where(and(eq(userChallenges.membershipId, membershipId), eq(userChallenges.userId, userId), eq(userChallenges.kind, kind), eq(userChallenges.jti, jti)))
      .returning({ id: userChallenges.id });
    return rows.length > 0;
  }

  /** A password change or set ends the pending reset; an admin activation or freeze ends the pending activation. */
  async deletePending(membershipId: string, userId: string, kind: ChallengeKind): Promise<void> {
    await this.database.db
      .delete(userChallenges)
      .where(and(eq(userChallenges.membershipId, membershipId), eq(userChallenges.userId, userId), eq(userChallenges.kind, kind)));
  }

  /**
   * Counts one OTP attempt before any compare, in the statement that checks the count: parallel
   * guesses each take one of the five, and the sixth finds nothing. Undefined: no live OTP.
   */
  async countOtpAttempt(membershipId: string, userId: string): Promise<CountedOtpAttempt | undefined> {
    const [row] = await this.database.db
      .update(userChallenges)
      .set({ otpAttempts: sql`${userChallenges.otpAttempts} + 1` })
      .where(
        and(
          eq(userChallenges.membershipId, membershipId),
          eq(userChallenges.userId, userId),
          eq(userChallenges.kind, 'reset'),
          isNotNull(userChallenges.otpDigest),
          lt(userChallenges.otpAttempts, MAX_OTP_ATTEMPTS),
          sql`${userChallenges.otpExpiresAt} > now()`,
        ),
      )
      .returning({ id: userChallenges.id, otpDigest: userChallenges.otpDigest, otpAttempts: userChallenges.otpAttempts });
    return row?.otpDigest ? { id: row.id, otpDigest: row.otpDigest, otpAttempts: row.otpAttempts } : undefined;
  }

  /**
   * A right OTP: deleted, and the reset's token replaced by the one `/verify-otp` answers. Only
   * while the OTP is still the one compared, so two parallel right guesses get one token.
   */
  async exchangeOtp(challengeId: string, otpDigest: string, jti: string, tokenExpiresAt: Date): Promise<boolean> {
    const rows = await this.database.db
      .update(userChallenges)
      .set({ jti, otpDigest: null, expiresAt: sql`greatest(${userChallenges.expiresAt}, ${tokenExpiresAt.toISOString()}::timestamptz)` })
      .where(and(eq(userChallenges.id, challengeId), eq(userChallenges.otpDigest, otpDigest)))
      .returning({ id: userChallenges.id });
    return rows.length > 0;
  }

  /** The fifth failure: the OTP is gone (the reset token it came with still works). */
  async dropOtp(challengeId: string, otpDigest: string): Promise<void> {
    await this.database.db
      .update(userChallenges)
      .set({ otpDigest: null })
      .where(and(eq(userChallenges.id, challengeId), eq(userChallenges.otpDigest, otpDigest)));
  }
}
