import { Inject, Injectable } from '@nestjs/common';
import { and, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { applications, sessions, tokenSessions, users, type TokenRecordKind, type TokenSessionRow, type UserRecord } from '../database/schema';
import { userRecordColumns } from '../sessions/token-session.repository';

/** An OpenID Provider grant's token record as the token checks read it. */
export type OidcTokenRecord = Pick<
  TokenSessionRow,
  | 'id'
  | 'sessionId'
  | 'userId'
  | 'clientId'
  | 'parentId'
  | 'scopes'
  | 'resource'
  | 'authTime'
  | 'amr'
  | 'accessJti'
  | 'refreshJti'
  | 'accessExpiresAt'
  | 'refreshExpiresAt'
  | 'revokedAt'
  | 'revokeReason'
  | 'ipAddress'
  | 'userAgent'
  | 'createdAt'
>;

/** A record with its sign-in session, its user and its client's standing, as one lookup loads them. */
export interface OidcTokenLookup {
  record: OidcTokenRecord;
  session: { id: string; revokedAt: Date | null } | null;
  user: UserRecord | null;
  /**
   * Whether the record's client is still an active OpenID Provider client of the membership (a
   * client's tokens follow its application); null for a record without client (single sign-on).
   */
  clientActive: boolean | null;
}

const recordColumns = {
  id: tokenSessions.id,
  sessionId: tokenSessions.sessionId,
  userId: tokenSessions.userId,
  clientId: tokenSessions.clientId,
  parentId: tokenSessions.parentId,
  scopes: tokenSessions.scopes,
  resource: tokenSessions.resource,
  authTime: tokenSessions.authTime,
  amr: tokenSessions.amr,
  accessJti: tokenSessions.accessJti,
  refreshJti: tokenSessions.refreshJti,
  accessExpiresAt: tokenSessions.accessExpiresAt,
  refreshExpiresAt: tokenSessions.refreshExpiresAt,
  revokedAt: tokenSessions.revokedAt,
  revokeReason: tokenSessions.revokeReason,
  ipAddress: tokenSessions.ipAddress,
  userAgent: tokenSessions.userAgent,
  createdAt: tokenSessions.createdAt,
};

/**
 * A record by id with its session, user and client, prepared once: userinfo, introspection, every
 * refresh and every single sign-on check run it, and PostgreSQL would plan a four-table join anew
 * for each of them.
 */
function prepareRecordLookup(db: Database['db']) {
  return db
    .select({
      record: recordColumns,
      session: { id: sessions.id, revokedAt: sessions.revokedAt },
      user: userRecordColumns,
      clientActive: sql<boolean | null>`case when ${tokenSessions.clientId} is null then null else coalesce(${applications.isActive} and ${applications.oidc} is not null, false) end`,
    })
    .from(tokenSessions)
    .leftJoin(sessions, eq(sessions.id, tokenSessions.sessionId))
    .leftJoin(users, and(eq(users.id, tokenSessions.userId), eq(users.membershipId, tokenSessions.membershipId)))
    .leftJoin(applications, and(eq(applications.id, tokenSessions.clientId), eq(applications.membershipId, tokenSessions.membershipId)))
    .where(
      and(
        eq(tokenSessions.id, sql.placeholder('recordId')),
        eq(tokenSessions.membershipId, sql.placeholder('membershipId')),
        eq(tokenSessions.kind, sql.placeholder('kind')),
      ),
    )
    .limit(1)
    .prepare('oidc_token_record');
}

/** The OpenID Provider's reads of `token_sessions` (its records are written by TokenSessionRepository.issue). */
@Injectable()
export class OidcTokenRepository {
  private readonly recordLookup: ReturnType<typeof prepareRecordLookup>;

  constructor(@Inject(DATABASE) database: Database) {
    this.recordLookup = prepareRecordLookup(database.db);
  }

  /** An `oidc` (or single sign-on `browser`) record of the membership by id, with its session, user and client, in one round trip. */
  async find(membershipId: string, recordId: string, kind: Extract<TokenRecordKind, 'oidc' | 'browser'> = 'oidc'): Promise<OidcTokenLookup | undefined> {
    const [row] = await this.recordLookup.execute({ recordId, membershipId, kind });
    return row;
  }
}
