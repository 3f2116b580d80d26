import { Inject, Injectable } from '@nestjs/common';
import { and, eq, gt, lt, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { mfaSignIns, type MfaSignInRow } from '../database/schema';

/** Wrong codes one mfa_token survives: the fifth ends it (contract, "Second factors"). */
export const MAX_MFA_ATTEMPTS = 5;

export type NewMfaSignIn = Pick<MfaSignInRow, 'id' | 'membershipId' | 'userId' | 'tokenDigest' | 'grant' | 'amr' | 'expiresAt'>;

/** Sign-ins waiting for their second factor, found by the mfa_token's digest within its membership. */
@Injectable()
export class MfaSignInRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  private live(membershipId: string, tokenDigest: string) {
    return and(
      eq(mfaSignIns.membershipId, membershipId),
      eq(mfaSignIns.tokenDigest, tokenDigest),
      lt(mfaSignIns.attempts, MAX_MFA_ATTEMPTS),
      gt(mfaSignIns.expiresAt, sql`now()`),
    );
  }

  async insert(row: NewMfaSignIn): Promise<void> {
    await this.database.db.insert(mfaSignIns).values(row);
  }

  /** The live sign-in of this token, without counting an attempt (options and enrollment read it). */
  async findLive(membershipId: string, tokenDigest: string): Promise<MfaSignInRow | undefined> {
    const [row] = await this.database.db.select().from(mfaSignIns).where(this.live(membershipId, tokenDigest)).limit(1);
    return row;
  }

  /**
   * Counts one attempt before any code is compared, in the statement that also checks the count,
   * so parallel guesses cannot pass the limit; undefined when the token is unknown, used up or expired.
   */
  async countAttempt(membershipId: string, tokenDigest: string): Promise<MfaSignInRow | undefined> {
    const [row] = await this.database.db
      .update(mfaSignIns)
      .set({ attempts: sql`${mfaSignIns.attempts} + 1` })
      .where(this.live(membershipId, tokenDigest))
      .returning();
    return row;
  }

  async setEnrollSecret(membershipId: string, id: string, secret: string): Promise<void> {
    await this.database.db
      .update(mfaSignIns)
      .set({ enrollSecret: secret })
      .where(and(eq(mfaSignIns.membershipId, membershipId), eq(mfaSignIns.id, id)));
  }

  async setWebauthnChallenge(membershipId: string, id: string, challenge: string): Promise<void> {
    await this.database.db
      .update(mfaSignIns)
      .set({ webauthnChallenge: challenge })
      .where(and(eq(mfaSignIns.membershipId, membershipId), eq(mfaSignIns.id, id)));
  }

  /** Uses the passkey challenge of this sign-in (single use: cleared by the statement that checks it). */
  async takeWebauthnChallenge(membershipId: string, id: string, challenge: string): Promise<boolean> {
    const rows = await this.database.db
      .update(mfaSignIns)
      .set({ webauthnChallenge: null })
      .where(and(eq(mfaSignIns.membershipId, membershipId), eq(mfaSignIns.id, id), eq(mfaSignIns.webauthnChallenge, challenge)))
      .returning({ id: mfaSignIns.id });
    return rows.length > 0;
  }

  /** Ends the sign-in (used, or out of attempts); false when another request ended it first. */
  async delete(membershipId: string, id: string): Promise<boolean> {
    const rows = await this.database.db
      .delete(mfaSignIns)
      .where(and(eq(mfaSignIns.membershipId, membershipId), eq(mfaSignIns.id, id)))
      .returning({ id: mfaSignIns.id });
    return rows.length > 0;
  }
}
