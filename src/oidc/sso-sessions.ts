import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { isPossibleId } from '../common/ids';
import type { UserRecord } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { MembershipCache } from '../memberships/membership-cache';
import { TokenRevoker } from '../sessions/token-revoker';
import { TokenSessionRepository } from '../sessions/token-session.repository';
import { toUserResponse } from '../users/user.mapper';
import { OidcTokenRepository } from './oidc-token.repository';
import { digestOf, matchesDigest, newOpaqueSecret } from './secrets';

/** A live single sign-on session, as its cookie names it. */
export interface SsoSession {
  /** The sign-in session (the `sessions` row every revocation trigger ends). */
  sessionId: string;
  user: UserRecord;
  authTime: Date;
  amr: string[] | null;
}

/** The `token_type` of TokenGenerated for a sign-in at the OpenID Provider's pages. */
export const SSO_TOKEN_TYPE = 'SingleSignOn';

/**
 * The OpenID Provider's single sign-on sessions (contract: the OP session cookie "stands for a
 * session of the user"): a `sessions` row with one `browser` record whose `access_jti` is the
 * digest of the cookie's secret. Being an ordinary session, it is ended by everything that ends
 * the user's sessions (logout-all, freeze, password change, MFA reset) with no extra code, and
 * the tokens issued to clients in it end with it.
 */
@Injectable()
export class SsoSessions {
  constructor(
    private readonly sessions: TokenSessionRepository,
    private readonly records: OidcTokenRepository,
    private readonly memberships: MembershipCache,
    private readonly revoker: TokenRevoker,
    private readonly recorder: EventRecorder,
  ) {}

  /**
   * Opens a session after a sign-in at the pages; answers the cookie value (`<record id>.<secret>`).
   * It lives as long as the membership's refresh tokens: the longest session the membership allows.
   * Undefined when nothing opened: the user was deleted or made inactive meanwhile, or no longer
   * has `checkedPasswordHash` (the hash a password step checked), as for a sign-in a moment later.
   */
  async open(
    membershipId: string,
    user: UserRecord,
    proof: { amr: readonly string[]; clientId: string; checkedPasswordHash?: string },
    metadata: { ipAddress?: string; userAgent?: string },
  ): Promise<{ cookie: string; session: SsoSession; maxAgeSeconds: number } | undefined> {
    const lifetimes = await this.memberships.get(membershipId);
    if (!lifetimes) throw new Error(`membership ${membershipId} vanished during a sign-in`);
    const id = randomUUID();
    const secret = newOpaqueSecret();
    const now = new Date();
    const expiresAt = new Date(now.getTime() + lifetimes.refreshTokenExpiresIn * 1000);
    const rows = this.recorder.prepare([
      {
        membershipId,
        eventType: 'TokenGenerated',
        utilizerId: user.id,
        document: {
          user: toUserResponse(user),
          user_id: user.id,
          token_type: SSO_TOKEN_TYPE,
          expires_in: lifetimes.refreshTokenExpiresIn,
          created_at: now.toISOString(),
          grant: 'password',
          client_id: proof.clientId,
          amr: [...proof.amr],
        },
      },
    ]);
    const stored = await this.sessions.issue(
      {
        id,
        sessionId: id,
        membershipId,
        userId: user.id,
        kind: 'browser',
        authTime: now,
        amr: [...proof.amr],
        accessJti: digestOf(secret),
        accessExpiresAt: expiresAt,
        expiresAt,
        ipAddress: metadata.ipAddress?.slice(0, 512) ?? null,
        userAgent: metadata.userAgent?.slice(0, 512) ?? null,
        createdAt: now,
      },
      rows,
      true,
      undefined,
      proof.checkedPasswordHash,
    );
    if (!stored) return undefined;
    this.recorder.publish(rows);
    return { cookie: `${id}.${secret}`, session: { sessionId: id, user, authTime: now, amr: [...proof.amr] }, maxAgeSeconds: lifetimes.refreshTokenExpiresIn };
  }

  /** The live session a cookie value names, or undefined (forged, ended, expired, user inactive). */
  async find(membershipId: string, cookie: string | undefined): Promise<SsoSession | undefined> {
    if (!cookie) return undefined;
    const separator = cookie.indexOf('.');
    const id = cookie.slice(0, separator);
    if (separator <= 0 || !isPossibleId(id)) return undefined;
    const found = await this.liveSession(membershipId, id);
    return found && matchesDigest(cookie.slice(separator + 1), found.secretDigest) ? found.session : undefined;
  }

  /**
   * The live session an ID token's `sid` names, when it is `userId`'s: RP-initiated logout without
   * the cookie (a cross-site POST carries no SameSite=Lax cookie), asked with a hint the issuer signed.
   */
  async named(membershipId: string, sessionId: string, userId: string): Promise<SsoSession | undefined> {
    if (!isPossibleId(sessionId)) return undefined;
    const found = await this.liveSession(membershipId, sessionId);
    return found?.session.user.id === userId ? found.session : undefined;
  }

  /** The session of a browser record still live (user active, neither ended nor expired), with its cookie secret's digest. */
  private async liveSession(membershipId: string, recordId: string): Promise<{ session: SsoSession; secretDigest: string } | undefined> {
    const found = await this.records.find(membershipId, recordId, 'browser');
    if (!found?.user?.isActive || !found.session || found.session.revokedAt || found.record.revokedAt) return undefined;
    if (found.record.accessExpiresAt.getTime() <= Date.now()) return undefined;
    const { record, user } = found;
    return { session: { sessionId: record.sessionId, user, authTime: record.authTime ?? record.accessExpiresAt, amr: record.amr }, secretDigest: record.accessJti };
  }

  /** RP-initiated logout: the session and every token issued in it end (TokenRevoked, reason `logout`). */
  async end(membershipId: string, session: SsoSession): Promise<void> {
    await this.recorder.transaction((record) => this.revoker.revokeSession(record, membershipId, session.sessionId, session.user.id, 'logout'));
  }
}
