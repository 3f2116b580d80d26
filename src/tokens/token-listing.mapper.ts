import type { TokenRecordKind } from '../database/schema';
import type { TokenListingRow } from '../sessions/token-listing.schema';

/** Metadata of a token session; built field by field, and there is no token string to leak. */
export interface TokenSessionResponse {
  _id: string;
  user_id: string;
  username: string | null;
  kind: TokenRecordKind;
  parent_id: string | null;
  scopes: string[] | null;
  created_at: string;
  expires_at: string;
  access_expires_at: string;
  refresh_expires_at: string | null;
  ip_address: string | null;
  user_agent: string | null;
  membership_id: string;
  revoked_at?: string;
  revoked_by?: string | null;
  revoke_reason?: string | null;
}

export function toTokenSessionResponse(row: TokenListingRow): TokenSessionResponse {
  const response: TokenSessionResponse = {
    _id: row.id,
    user_id: row.userId,
    username: row.username,
    kind: row.kind,
    parent_id: row.parentId,
    scopes: row.scopes,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
    access_expires_at: row.accessExpiresAt.toISOString(),
    refresh_expires_at: row.refreshExpiresAt ? row.refreshExpiresAt.toISOString() : null,
    ip_address: row.ipAddress,
    user_agent: row.userAgent,
    membership_id: row.membershipId,
  };
  if (row.revokedAt) {
    response.revoked_at = row.revokedAt.toISOString();
    response.revoked_by = row.revokedBy;
    response.revoke_reason = row.revokeReason;
  }
  return response;
}
