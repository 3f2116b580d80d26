import { Inject, Injectable } from '@nestjs/common';
import { and, eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { sessions, tokenSessions, users, type TokenRecordKind, type TokenSessionRow, type UserRecord } from '../database/schema';
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

/** A record with its sign-in session and its user, as one lookup loads them. */
export interface OidcTokenLookup {
  record: OidcTokenRecord;
  session: { id: string; revokedAt: Date | null } | null;
  user: UserRecord | null;
}

const recordColumns = {
  id: tokenSessions.id,
  sessionId: tokenSessions.sessionId,
  userId: tokenSessions.userId,
  clientId: tokenSessions.clientId,
  parentId: tokenSessions.parentId,
  scopes: tokenSessions.scopes,
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

/** The OpenID Provider's reads of `token_sessions` (its records are written by TokenSessionRepository.issue). */
@Injectable()
export class OidcTokenRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  /** An `oidc` (or single sign-on `browser`) record of the membership by id, with its session and user, in one round trip. */
  async find(membershipId: string, recordId: string, kind: Extract<TokenRecordKind, 'oidc' | 'browser'> = 'oidc'): Promise<OidcTokenLookup | undefined> {
    const [row] = await this.database.db
      .select({ record: recordColumns, session: { id: sessions.id, revokedAt: sessions.revokedAt }, user: userRecordColumns })
      .from(tokenSessions)
      .leftJoin(sessions, eq(sessions.id, tokenSessions.sessionId))
      .leftJoin(users, and(eq(users.id, tokenSessions.userId), eq(users.membershipId, tokenSessions.membershipId)))
      .where(and(eq(tokenSessions.id, recordId), eq(tokenSessions.membershipId, membershipId), eq(tokenSessions.kind, kind)))
      .limit(1);
    return row;
  }
}
