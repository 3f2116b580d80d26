import { Inject, Injectable } from '@nestjs/common';
import { and, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { memberships, tokenSessions, users, type MembershipRow, type TokenSessionRow, type UserRow } from '../database/schema';
import { runListQuery, type ListPage, type ListRequest } from '../common/query';
import type { PgTable } from 'drizzle-orm/pg-core';
import { TOKEN_LISTING_QUERY_SCHEMA, tokenListing, type TokenListingRow } from './token-listing.schema';

/** Which sessions a listing shows: live ones (not revoked, not yet expired) or revoked ones. */
export type SessionListingState = 'active' | 'revoked';

/** The membership fields that verify and sign tokens. */
export type SigningMembership = Pick<
  MembershipRow,
  'id' | 'name' | 'slug' | 'secretKey' | 'expiresIn' | 'refreshTokenExpiresIn' | 'scopedTokenExpiresIn'
>;

export interface VerificationRecord {
  membership: SigningMembership;
  session: TokenSessionRow | null;
  user: UserRow | null;
}

/**
 * Everything a Bearer token's validity depends on, in one round trip of primary-key lookups: the
 * membership's key, the token session and its user. Prepared once: it runs on every
 * authenticated request.
 */
function prepareVerification(db: Database['db']) {
  return db
    .select({
      membership: {
        id: memberships.id,
        name: memberships.name,
        slug: memberships.slug,
        secretKey: memberships.secretKey,
        expiresIn: memberships.expiresIn,
        refreshTokenExpiresIn: memberships.refreshTokenExpiresIn,
        scopedTokenExpiresIn: memberships.scopedTokenExpiresIn,
      },
      session: tokenSessions,
      user: users,
    })
    .from(memberships)
    .leftJoin(tokenSessions, and(eq(tokenSessions.id, sql.placeholder('sessionId')), eq(tokenSessions.membershipId, memberships.id)))
    .leftJoin(users, and(eq(users.id, tokenSessions.userId), eq(users.membershipId, memberships.id)))
    .where(eq(memberships.id, sql.placeholder('membershipId')))
    .limit(1)
    .prepare('token_verification');
}

@Injectable()
export class TokenSessionRepository {
  private readonly verificationQuery: ReturnType<typeof prepareVerification>;

  constructor(@Inject(DATABASE) private readonly database: Database) {
    this.verificationQuery = prepareVerification(database.db);
  }

  async findForVerification(membershipId: string, sessionId: string): Promise<VerificationRecord | undefined> {
    const [row] = await this.verificationQuery.execute({ membershipId, sessionId });
    return row;
  }

  async insert(executor: Executor, row: typeof tokenSessions.$inferInsert): Promise<void> {
    await executor.insert(tokenSessions).values(row);
  }

  /**
   * Revokes sessions that are still active: the given ones and the scoped tokens derived from
   * them. Answers the rows it revoked (so the caller records one event per pair).
   */
  async revokeSessions(
    executor: Executor,
    membershipId: string,
    sessionIds: readonly string[],
    revokedBy: string,
    reason: string,
  ): Promise<TokenSessionRow[]> {
    if (!sessionIds.length) return [];
    return executor
      .update(tokenSessions)
      .set({ revokedAt: new Date(), revokedBy, revokeReason: reason })
      .where(
        and(
          eq(tokenSessions.membershipId, membershipId),
          isNull(tokenSessions.revokedAt),
          or(inArray(tokenSessions.id, [...sessionIds]), inArray(tokenSessions.parentId, [...sessionIds])),
        ),
      )
      .returning();
  }

  /** Every active session of a user, optionally sparing one (the caller's own, after a password change). */
  async revokeAllOfUser(
    executor: Executor,
    membershipId: string,
    userId: string,
    revokedBy: string,
    reason: string,
    exceptSessionId?: string,
  ): Promise<TokenSessionRow[]> {
    const spare = exceptSessionId
      ? sql`and ${tokenSessions.id} <> ${exceptSessionId} and ${tokenSessions.parentId} is distinct from ${exceptSessionId}`
      : sql``;
    return executor
      .update(tokenSessions)
      .set({ revokedAt: new Date(), revokedBy, revokeReason: reason })
      .where(
        sql`${tokenSessions.membershipId} = ${membershipId} and ${tokenSessions.userId} = ${userId} and ${tokenSessions.revokedAt} is null ${spare}`,
      )
      .returning();
  }

  /** Marks a refresh pair used: succeeds only once, so two concurrent refreshes cannot both win. */
  async consumeForRefresh(executor: Executor, membershipId: string, sessionId: string, revokedBy: string): Promise<TokenSessionRow | undefined> {
    const [row] = await executor
      .update(tokenSessions)
      .set({ revokedAt: new Date(), revokedBy, revokeReason: 'refreshed' })
      .where(and(eq(tokenSessions.membershipId, membershipId), eq(tokenSessions.id, sessionId), isNull(tokenSessions.revokedAt)))
      .returning();
    return row;
  }

  private listingScope(membershipId: string, state: SessionListingState) {
    return state === 'active'
      ? and(eq(tokenListing.membershipId, membershipId), isNull(tokenListing.revokedAt), sql`${tokenListing.expiresAt} > now()`)
      : and(eq(tokenListing.membershipId, membershipId), sql`${tokenListing.revokedAt} is not null`);
  }

  /** Active or revoked sessions of a membership with their username, for the token listings. Newest first by default. */
  listSessions(
    membershipId: string,
    state: SessionListingState,
    request: ListRequest,
    toResponse: (row: TokenListingRow) => object,
  ): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery<TokenListingRow>({
      executor: this.database.db,
      // The runner reads from one table-like source; the listing subquery is one (see token-listing.schema.ts).
      table: tokenListing as unknown as PgTable,
      scope: this.listingScope(membershipId, state) ?? sql`false`,
      schema: TOKEN_LISTING_QUERY_SCHEMA,
      request,
      defaultSort: sql`${tokenListing.createdAt} desc, ${tokenListing.id} desc`,
      toResponse,
    });
  }

  async findListedSession(membershipId: string, state: SessionListingState, sessionId: string): Promise<TokenListingRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(tokenListing)
      .where(and(this.listingScope(membershipId, state), eq(tokenListing.id, sessionId)))
      .limit(1);
    return row;
  }
}
