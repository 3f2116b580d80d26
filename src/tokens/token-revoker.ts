import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/database';
import type { TokenSessionRow } from '../database/schema';
import type { RecordEvent } from '../events/event-recorder';
import { TokenSessionRepository } from './token-session.repository';

/**
 * The revocation entry points other features call (logout-all, password change, password reset,
 * freeze, delete, a single session). Each revoked session records one TokenRevoked event.
 */
@Injectable()
export class TokenRevoker {
  constructor(private readonly sessions: TokenSessionRepository) {}

  async revokeAllOfUser(
    tx: Tx,
    record: RecordEvent,
    membershipId: string,
    userId: string,
    utilizerId: string,
    reason: string,
    options: { exceptSessionId?: string } = {},
  ): Promise<number> {
    const revoked = await this.sessions.revokeAllOfUser(tx, membershipId, userId, utilizerId, reason, options.exceptSessionId);
    this.recordRevocations(record, revoked, utilizerId);
    return revoked.length;
  }

  async revokeSession(tx: Tx, record: RecordEvent, membershipId: string, sessionId: string, utilizerId: string, reason: string): Promise<number> {
    const revoked = await this.sessions.revokeSessions(tx, membershipId, [sessionId], utilizerId, reason);
    this.recordRevocations(record, revoked, utilizerId);
    return revoked.length;
  }

  private recordRevocations(record: RecordEvent, revoked: readonly TokenSessionRow[], utilizerId: string): void {
    for (const session of revoked) {
      record({
        membershipId: session.membershipId,
        eventType: 'TokenRevoked',
        utilizerId,
        document: {
          token_type: 'Bearer',
          expire_time: session.accessExpiresAt.toISOString(),
          session_id: session.id,
          user_id: session.userId,
        },
      });
    }
  }
}
