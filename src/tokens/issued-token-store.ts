import { Injectable } from '@nestjs/common';
import type { UserRecord } from '../database/schema';
import { EventRecorder, type NewEvent } from '../events/event-recorder';
import { TokenSessionRepository, type UsedUpByIssuance } from '../sessions/token-session.repository';
import { toUserResponse } from '../users/user.mapper';
import type { IssuedTokens } from './token-issuer';
import type { TokenResponse } from './token.dto';

/**
 * Stores what TokenIssuer issued: the new session and its events in one atomic write (the
 * recorder's prepare + publish, the token routes' hot path), so that listeners hear of the events
 * only once the session exists.
 */
@Injectable()
export class IssuedTokenStore {
  constructor(
    private readonly recorder: EventRecorder,
    private readonly sessions: TokenSessionRepository,
  ) {}

  /**
   * False when nothing was stored: the session was revoked meanwhile, `usedUp` was used already,
   * or the user to open a session for was deleted, made inactive or (given `checkedPasswordHash`,
   * the hash a sign-in's password was checked against) given another password meanwhile.
   */
  async store(issued: IssuedTokens, events: NewEvent[], usedUp?: UsedUpByIssuance, checkedPasswordHash?: string): Promise<boolean> {
    const rows = this.recorder.prepare(events);
    const stored = await this.sessions.issue(issued.session, rows, issued.opensSession, usedUp, checkedPasswordHash);
    if (stored) this.recorder.publish(rows);
    return stored;
  }
}

/** The TokenGenerated event of tokens issued to `user`; callers add what their grant adds to the document. */
export function tokenGeneratedEvent(user: UserRecord, response: TokenResponse) {
  const document: Record<string, unknown> = {
    user: toUserResponse(user),
    token_type: response.token_type,
    expires_in: response.expires_in,
    created_at: response.created_at,
  };
  if (response.refresh_token_expires_in !== undefined) document.refresh_token_expires_in = response.refresh_token_expires_in;
  if (response.scopes) document.scopes = response.scopes;
  return { membershipId: user.membershipId, eventType: 'TokenGenerated' as const, utilizerId: user.id, document };
}
