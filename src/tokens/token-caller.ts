import type { UserCaller } from '../common/caller';
import type { UserRecord } from '../database/schema';
import { toUserResponse } from '../users/user.mapper';
import type { VerifiedBearer, VerifiedCaller, VerifiedWithUser } from './token-verifier';

/** The caller of a verified token, with the user's document when its row was loaded for it. */
export function toUserCaller(verified: VerifiedCaller | VerifiedWithUser | VerifiedBearer, record?: UserRecord): UserCaller {
  const { claims, user, session, family } = verified;
  return {
    kind: 'user',
    // Checked equal to the session's user and the membership whose key signed the token.
    id: claims.sub,
    membershipId: claims.prn,
    roleSlug: user.role,
    ownPermissions: user.permissions,
    ownForbidden: user.forbidden,
    profile: record ? toUserResponse(record) : undefined,
    sessionId: family.id,
    scopes: session.scopes ?? null,
    tokenId: claims.tid ?? claims.sid,
    tokenExpiresAt: claims.exp,
    amr: claims.amr ?? null,
  };
}
