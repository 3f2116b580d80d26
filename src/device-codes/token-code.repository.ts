import { Inject, Injectable } from '@nestjs/common';
import { and, eq, gt, sql } from 'drizzle-orm';
import { DATABASE, type Database, queryRows } from '../database/database';
import { memberships, sessions, tokenCodes, users, type TokenCodeRow, type UserRecord } from '../database/schema';
import type { ScopedApproval } from '../tokens/token-issuer';
import { signingColumns, userRecordColumns, type SigningMembership } from '../sessions/token-session.repository';

export type NewTokenCode = Pick<
  TokenCodeRow,
  'id' | 'membershipId' | 'userCode' | 'deviceCodeDigest' | 'clientInfo' | 'pollInterval' | 'expiresAt'
> &
  Partial<Pick<TokenCodeRow, 'oidcClientId' | 'oidcScopes'>>;

/** What a device's poll needs: the code, the approver and the key that signs the pair. */
export interface PolledCode {
  code: TokenCodeRow;
  membership: SigningMembership;
  approver: UserRecord | null;
}

/** Poll slow-down: each early poll adds this much to the code's interval, up to the maximum. */
export const SLOW_DOWN_STEP_SECONDS = 5;
export const MAX_POLL_INTERVAL_SECONDS = 60;

@Injectable()
export class TokenCodeRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  /** False when the user code is already taken in the membership (the caller draws another). */
  async insert(code: NewTokenCode): Promise<boolean> {
    const rows = await this.database.db
      .insert(tokenCodes)
      .values(code)
      .onConflictDoNothing({ target: [tokenCodes.membershipId, tokenCodes.userCode] })
      .returning({ id: tokenCodes.id });
    return rows.length > 0;
  }

  /** A code that has not expired, by its user code. */
  async findLive(membershipId: string, userCode: string): Promise<TokenCodeRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(tokenCodes)
      .where(and(eq(tokenCodes.membershipId, membershipId), eq(tokenCodes.userCode, userCode), gt(tokenCodes.expiresAt, sql`now()`)));
    return row;
  }

  /**
   * One conditional update: only a pending, unexpired code is decided, and approved only while the
   * approving session (`approvingSessionId`) is not revoked. Undefined when none was.
   *
   * The approval reads that session `for share`, as issuing does: a user-wide trigger revokes the
   * sessions before it denies the user's approved codes, so it waits for an approval under way and
   * then denies what it approved (else the approval, committed after the denial's snapshot, would
   * stay approved and a device would get a session after the trigger); an approval that comes
   * later finds its session revoked.
   */
  async decide(
    membershipId: string,
    userCode: string,
    decision: { state: 'approved' | 'denied'; approvedBy: string | null; scoped: ScopedApproval | null; amr: readonly string[] | null },
    approvingSessionId: string | null,
  ): Promise<TokenCodeRow | undefined> {
    const { scoped } = decision;
    const [row] = await this.database.db
      .update(tokenCodes)
      .set({
        state: decision.state,
        approvedBy: decision.approvedBy,
        scopes: scoped ? [...scoped.scopes] : null,
        approvedSessionId: scoped?.sessionId ?? null,
        approvedTokenId: scoped?.tokenId ?? null,
        approvedUntil: scoped?.until ?? null,
        amr: decision.amr ? [...decision.amr] : null,
        decidedAt: sql`now()`,
      })
      .where(
        and(
          eq(tokenCodes.membershipId, membershipId),
          eq(tokenCodes.userCode, userCode),
          eq(tokenCodes.state, 'pending'),
          gt(tokenCodes.expiresAt, sql`now()`),
          approvingSessionId === null
            ? undefined
            : sql`exists (select 1 from ${sessions} where ${sessions.id} = ${approvingSessionId} and ${sessions.membershipId} = ${membershipId} and ${sessions.revokedAt} is null for share)`,
        ),
      )
      .returning();
    return row;
  }

  /** The code with this device code digest in the membership, with its approver and signing key. */
  async findForPoll(membershipId: string, deviceCodeDigest: string): Promise<PolledCode | undefined> {
    const [row] = await this.database.db
      .select({ code: tokenCodes, membership: signingColumns, approver: userRecordColumns })
      .from(tokenCodes)
      .innerJoin(memberships, eq(memberships.id, tokenCodes.membershipId))
      .leftJoin(users, and(eq(users.id, tokenCodes.approvedBy), eq(users.membershipId, tokenCodes.membershipId)))
      .where(and(eq(tokenCodes.membershipId, membershipId), eq(tokenCodes.deviceCodeDigest, deviceCodeDigest)));
    return row;
  }

  /**
   * Records a poll of a pending code in one conditional update: a poll sooner than the code's
   * interval after the previous one grows the interval (RFC 8628 section 3.5) and answers 'slow_down'.
   * Undefined when the code is no longer pending (decided meanwhile).
   */
  async recordPendingPoll(id: string): Promise<'slow_down' | 'pending' | undefined> {
    // The previous poll is read (and locked) in `prev`: RETURNING would see the new values.
    const rows = await queryRows<{ early: boolean }>(
      this.database.db,
      sql`with prev as (
            select id, (last_polled_at is not null and last_polled_at > now() - make_interval(secs => poll_interval)) as early
            from ${tokenCodes} where id = ${id} and state = 'pending' for update
          )
          update ${tokenCodes} t set last_polled_at = now(),
            poll_interval = case when prev.early then least(t.poll_interval + ${SLOW_DOWN_STEP_SECONDS}, ${MAX_POLL_INTERVAL_SECONDS}) else t.poll_interval end
          from prev where t.id = prev.id and t.state = 'pending'
          returning prev.early as early`,
    );
    const [row] = rows;
    if (!row) return undefined;
    return row.early ? 'slow_down' : 'pending';
  }

  /** The code's state now; undefined when it is gone (expired and swept, or deleted with its approver). */
  async stateOf(id: string): Promise<string | undefined> {
    const [row] = await this.database.db.select({ state: tokenCodes.state }).from(tokenCodes).where(eq(tokenCodes.id, id));
    return row?.state;
  }
}
