import type { ApplicationRow, UserRecord } from '../database/schema';

/** Who is calling, resolved once per request from its token. */
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
   * The whole user row, loaded only for routes that declare `@Authenticated({ userRecord: true })`:
   * the others decide access from the fields above, with a narrower (cheaper) query.
   */
  user?: UserRecord;
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
  application: ApplicationRow;
}
