import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { DomainError } from '../common/errors';
import type { ListPage, ListRequest } from '../common/query';
import { EventRecorder } from '../events/event-recorder';
import { CallerPermissions } from '../roles/caller-permissions';
import { toTokenSessionResponse, type TokenSessionResponse } from './token-listing.mapper';
import { TokenRevoker } from '../sessions/token-revoker';
import { TokenSessionRepository, type SessionListingState } from '../sessions/token-session.repository';

const REVOKED_BY_ADMINISTRATOR = 'revoked-by-administrator';

const notFound = (): DomainError => new DomainError('TokenNotFound', 'No active token session with this id');

/**
 * The active- and revoked-token listings of a membership: token record metadata only (the
 * service never stores token strings). Revoking one here works like /revoke-token with its
 * token: a pair's record ends its whole sign-in session (every pair refreshed in it and every
 * scoped token made from it), a scoped token's record ends that token only; each revoked record
 * records a TokenRevoked event.
 */
@Injectable()
export class TokenListingService {
  constructor(
    private readonly sessions: TokenSessionRepository,
    private readonly revoker: TokenRevoker,
    private readonly recorder: EventRecorder,
    private readonly permissions: CallerPermissions,
  ) {}

  /** Without the records whose `tokens.read.<id>` a forbidden entry denies the caller, as GET .../active-tokens/{id} would. */
  async list(caller: Caller, membershipId: string, state: SessionListingState, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    const hiddenIds = await this.permissions.hiddenFromLists(caller, 'tokens');
    return this.sessions.listSessions(membershipId, state, { ...request, hiddenIds }, toTokenSessionResponse);
  }

  async getActive(membershipId: string, sessionId: string): Promise<TokenSessionResponse> {
    const row = await this.sessions.findListedSession(membershipId, 'active', sessionId);
    if (!row) throw notFound();
    return toTokenSessionResponse(row);
  }

  async revoke(caller: Caller, membershipId: string, sessionId: string): Promise<void> {
    // Only a live session can be revoked here; an expired one is already dead and soon swept.
    const listed = await this.sessions.findListedSession(membershipId, 'active', sessionId);
    if (!listed) throw notFound();
    // Revoked by someone else between the check and this update: zero rows, and the outcome the caller wanted.
    await this.recorder.transaction((record) =>
      listed.kind === 'scoped'
        ? this.revoker.revokeTokenRecord(record, membershipId, listed.id, caller.id, REVOKED_BY_ADMINISTRATOR)
        : this.revoker.revokeSession(record, membershipId, listed.sessionId, caller.id, REVOKED_BY_ADMINISTRATOR),
    );
  }
}
