import { and, eq } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/pg-core';
import { querySchema, sortableFieldNames } from '../common/query';
import { tokenSessions, users, type TokenRecordKind } from '../database/schema';

/**
 * Token sessions joined with their user's username: what the active- and revoked-token listings
 * read, filter and sort. A subquery, so the one list runner (which reads one "table") can serve
 * it; PostgreSQL flattens it, so the membership index still applies. Token strings are never
 * stored, and the jti columns are not part of it.
 */
export const tokenListing = new QueryBuilder()
  .select({
    id: tokenSessions.id,
    sessionId: tokenSessions.sessionId,
    membershipId: tokenSessions.membershipId,
    userId: tokenSessions.userId,
    username: users.username,
    kind: tokenSessions.kind,
    parentId: tokenSessions.parentId,
    scopes: tokenSessions.scopes,
    createdAt: tokenSessions.createdAt,
    expiresAt: tokenSessions.expiresAt,
    accessExpiresAt: tokenSessions.accessExpiresAt,
    refreshExpiresAt: tokenSessions.refreshExpiresAt,
    ipAddress: tokenSessions.ipAddress,
    userAgent: tokenSessions.userAgent,
    revokedAt: tokenSessions.revokedAt,
    revokedBy: tokenSessions.revokedBy,
    revokeReason: tokenSessions.revokeReason,
  })
  .from(tokenSessions)
  .leftJoin(users, and(eq(users.id, tokenSessions.userId), eq(users.membershipId, tokenSessions.membershipId)))
  .as('token_listing');

export interface TokenListingRow {
  id: string;
  /** The sign-in session the record belongs to: what revoking it ends (not shown in answers). */
  sessionId: string;
  membershipId: string;
  userId: string;
  username: string | null;
  kind: TokenRecordKind;
  parentId: string | null;
  scopes: string[] | null;
  createdAt: Date;
  expiresAt: Date;
  accessExpiresAt: Date;
  refreshExpiresAt: Date | null;
  ipAddress: string | null;
  userAgent: string | null;
  revokedAt: Date | null;
  revokedBy: string | null;
  revokeReason: string | null;
}

export const TOKEN_LISTING_QUERY_SCHEMA = querySchema(
  tokenListing,
  [
    'id', 'userId', 'username', 'kind', 'parentId', 'scopes', 'createdAt', 'expiresAt', 'accessExpiresAt', 'refreshExpiresAt',
    'ipAddress', 'userAgent', 'revokedAt', 'revokedBy', 'revokeReason',
  ],
  {
    sortable: ['id', 'createdAt', 'expiresAt'],
    stringArrays: ['scopes'],
    hidden: ['token', 'access_token', 'refresh_token', 'access_jti', 'refresh_jti', 'jti'],
  },
);

export const TOKEN_LISTING_SORTABLE_FIELDS = sortableFieldNames(TOKEN_LISTING_QUERY_SCHEMA);
