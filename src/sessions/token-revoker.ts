import { Injectable } from '@nestjs/common';
import type { TokenSessionRow } from '../database/schema';
import type { RecordEvent } from '../events/event-recorder';
import { TokenSessionRepository } from './token-session.repository';

/**
 * The revocation entry points other features call (logout-all, password change, password reset,
 * freeze, delete, a single session, a single scoped token). Each revoked token record records
 * one TokenRevoked event with the reason; no token string or digest is in it. They run in the
 * caller's transaction (EventRecorder.transaction), which `record` belongs to.
 */
@Injectable()
export class TokenRevoker {
  constructor(private readonly sessions: TokenSessionRepository) {}

  /**
   * Every sign-in session of the user, optionally sparing one (`exceptSessionId`), every device
   * code the user approved that no device has polled yet (it becomes denied), and every sign-in of
   * the user still under way (a pending second step, an OpenID Provider interaction). The one entry point of
   * user-wide triggers: logout-all, password change or set, freeze or any change making the user
   * inactive, deletion, and whatever else ends all of a user's access (an MFA reset).
   */
  async revokeAllOfUser(
    record: RecordEvent,
    membershipId: string,
    userId: string,
    utilizerId: string,
    reason: string,
    options: { exceptSessionId?: string } = {},
  ): Promise<number> {
    // The user's row first: a device poll opening a session waits for nothing after it, and
    // is waited for here (see `prepareIssue`). Then sessions: revoking them waits for the device
    // approvals under way in them (which read their session `for share`), so that the denial, a
    // later statement, sees what they approved.
    await this.sessions.lockUserAgainstIssuing(membershipId, userId);
    const revoked = await this.sessions.revokeAllOfUser(membershipId, userId, utilizerId, reason, options.exceptSessionId);
    await this.sessions.denyApprovedDeviceCodes(membershipId, userId);
    await this.sessions.endSignInsUnderWay(membershipId, userId);
    this.recordRevocations(record, revoked, utilizerId, reason);
    return revoked.length;
  }

  /** A whole sign-in session: every pair refreshed from it and every scoped token made from it. */
  async revokeSession(record: RecordEvent, membershipId: string, sessionId: string, utilizerId: string, reason: string): Promise<number> {
    const revoked = await this.sessions.revokeSessions(membershipId, [sessionId], utilizerId, reason);
    this.recordRevocations(record, revoked, utilizerId, reason);
    return revoked.length;
  }

  /** One token record alone (a scoped token revoking itself); its session goes on. */
  async revokeTokenRecord(record: RecordEvent, membershipId: string, tokenId: string, utilizerId: string, reason: string): Promise<number> {
    const revoked = await this.sessions.revokeTokenRecord(membershipId, tokenId, utilizerId, reason);
    this.recordRevocations(record, revoked, utilizerId, reason);
    return revoked.length;
  }

  /** An OpenID Provider grant (every record rotated from its first); the session and the client's other grants go on. */
  async revokeGrant(record: RecordEvent, membershipId: string, grantId: string, utilizerId: string, reason: string): Promise<number> {
    const revoked = await this.sessions.revokeGrant(membershipId, grantId, utilizerId, reason);
    this.recordRevocations(record, revoked, utilizerId, reason);
    return revoked.length;
  }

  /** The user's grants to these OpenID Provider clients (consent to them withdrawn), in every session; the sessions go on. */
  async revokeClientGrants(
    record: RecordEvent,
    membershipId: string,
    userId: string,
    clientIds: readonly string[],
    utilizerId: string,
    reason: string,
  ): Promise<number> {
    const revoked = await this.sessions.revokeClientGrants(membershipId, userId, clientIds, utilizerId, reason);
    this.recordRevocations(record, revoked, utilizerId, reason);
    return revoked.length;
  }

  private recordRevocations(record: RecordEvent, revoked: readonly TokenSessionRow[], utilizerId: string, reason: string): void {
    for (const token of revoked) {
      record({
        membershipId: token.membershipId,
        eventType: 'TokenRevoked',
        utilizerId,
        document: {
          token_type: 'Bearer',
          expire_time: token.accessExpiresAt.toISOString(),
          session_id: token.sessionId,
          token_id: token.id,
          user_id: token.userId,
          // An OpenID Provider grant's record names its client and the grant that issued it.
          ...(token.clientId ? { client_id: token.clientId } : {}),
          ...(token.clientId && token.grantType ? { grant: token.grantType } : {}),
          reason,
        },
      });
    }
  }
}
