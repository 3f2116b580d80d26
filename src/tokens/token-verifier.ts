import { Injectable } from '@nestjs/common';
import { DomainError, type ErrorCode } from '../common/errors';
import type { UserRecord } from '../database/schema';
import type { VerifiedSession } from './token-session.repository';
import { JwtCodec, type TokenClaims } from './jwt-codec';
import { type SigningMembership, TokenSessionRepository } from './token-session.repository';

/** What a Bearer token is presented for; it decides which error codes apply. */
export type TokenUse = 'access' | 'refresh' | 'any';

export interface VerifiedBearer {
  claims: TokenClaims;
  isRefreshToken: boolean;
  membership: SigningMembership;
  session: VerifiedSession;
  user: UserRecord;
}

const CODES: Record<TokenUse, { expired: ErrorCode; revoked: ErrorCode }> = {
  access: { expired: 'TokenWasExpired', revoked: 'TokenWasRevoked' },
  any: { expired: 'TokenWasExpired', revoked: 'TokenWasRevoked' },
  refresh: { expired: 'RefreshTokenWasExpired', revoked: 'RefreshTokenWasRevoked' },
};

const invalid = (): DomainError => new DomainError('InvalidToken', 'The token is not valid');

/**
 * A Bearer token is valid only when its signature, expiry and revocation checks pass and its
 * user exists and is active. Checked against the database on every request, so a revocation
 * or a frozen user on another instance is seen at once.
 */
@Injectable()
export class TokenVerifier {
  constructor(
    private readonly sessions: TokenSessionRepository,
    private readonly codec: JwtCodec,
  ) {}

  async verify(token: string, use: TokenUse): Promise<VerifiedBearer> {
    const peeked = this.codec.peek(token);
    if (!peeked) throw invalid();
    const record = await this.sessions.findForVerification(peeked.prn, peeked.sid);
    if (!record) throw invalid();
    const { membership, session, user } = record;

    const verified = this.codec.verify(token, membership.secretKey, {
      issuer: membership.name,
      audience: membership.slug,
    });
    if (!verified.ok) {
      if (verified.reason === 'expired') throw new DomainError(CODES[use].expired, 'The token has expired');
      throw invalid();
    }
    const claims = verified.claims;
    const isRefreshToken = claims.refresh_token === true;
    if (use === 'access' && isRefreshToken) throw invalid();
    if (use === 'refresh' && !isRefreshToken) {
      throw new DomainError('TokenIsNotRefreshable', 'An access token cannot be used to refresh; send the refresh token');
    }
    // The session row is swept a few minutes after expiry; a signed, unexpired token without one is not ours.
    if (!session || session.userId !== claims.sub) throw invalid();
    if (claims.jti !== (isRefreshToken ? session.refreshJti : session.accessJti)) throw invalid();
    if (session.revokedAt) throw new DomainError(CODES[use].revoked, 'The token has been revoked');
    if (!user) throw invalid();
    if (!user.isActive) throw new DomainError('UserInactive', 'The user account is not active');
    return { claims, isRefreshToken, membership, session, user };
  }
}
