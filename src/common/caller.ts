import type { ApplicationResponse } from './application-document';
import type { UserResponse } from './user-document';

/**
 * Who is calling, resolved once per request from its token: ids, permissions, scopes and kind. A
 * plain shape: no database row, no secret or digest.
 */
export type Caller = UserCaller | ApplicationCaller;

interface CallerBase {
  id: string;
  membershipId: string;
  roleSlug: string | null;
  ownPermissions: readonly string[];
  ownForbidden: readonly string[];
}

export interface UserCaller extends CallerBase {
  kind: 'user';
  /**
   * The user's own document, only for routes that declare `@Authenticated({ profile: true })`:
   * the others decide access from the fields above, with a narrower (cheaper) query.
   */
  profile?: UserResponse;
  /** The sign-in session (`sid`) of the access token used. */
  sessionId: string;
  /** Scopes of a scoped token; null for a full access token. */
  scopes: readonly string[] | null;
  /** The token record the access token names (what a token derived from it records as its parent). */
  tokenId: string;
  /** When the access token expires, in seconds since the epoch (a token derived from it lives no longer). */
  tokenExpiresAt: number;
  /** The session's authentication methods (RFC 8176) from the token; null when it carries none. */
  amr: readonly string[] | null;
}

export interface ApplicationCaller extends CallerBase {
  kind: 'application';
  /** The application's own document (no secret digest), only for `@Authenticated({ profile: true })`. */
  profile?: ApplicationResponse;
}
