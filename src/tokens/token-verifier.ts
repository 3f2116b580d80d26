import { Injectable } from '@nestjs/common';
import { DomainError, type ErrorCode, userInactive } from '../common/errors';
import type { UserRecord } from '../database/schema';
import { JwtCodec, type TokenClaims } from './jwt-codec';
import {
  type CallerVerificationRecord,
  type CheckedFamily,
  ROTATED_REASON,
  type SigningMembership,
  TokenSessionRepository,
  type UserVerificationRecord,
  type VerificationRecord,
  type VerifiedSession,
} from '../sessions/token-session.repository';

/** What a Bearer token is presented for; it decides which error codes apply. */
export type TokenUse = 'access' | 'refresh' | 'any';

/** A verified Bearer token with its whole session and user. */
export type VerifiedBearer = Checked<VerificationRecord>;

const CODES: Record<TokenUse, { expired: ErrorCode; revoked: ErrorCode }> = {
  access: { expired: 'TokenWasExpired', revoked: 'TokenWasRevoked' },
  any: { expired: 'TokenWasExpired', revoked: 'TokenWasRevoked' },
  refresh: { expired: 'RefreshTokenWasExpired', revoked: 'RefreshTokenWasRevoked' },
};

const invalid = (): DomainError => new DomainError('InvalidToken', 'The token is not valid');

/**
 * A refresh token presented again after it was rotated, while its session is still alive: the
 * answer is RefreshTokenWasRevoked, and the caller must end the session (OAuth 2.0 Security BCP:
 * one of the two holders is a thief, and which one cannot be told).
 */
export class RefreshTokenReuse extends DomainError {
  constructor(readonly reused: { membershipId: string; sessionId: string; userId: string }) {
    super(CODES.refresh.revoked, 'The token has been revoked');
  }
}

/** What a token check reads, whichever query loaded it. */
interface CheckedRecord {
  membership: Pick<SigningMembership, 'name' | 'slug' | 'secretKey'>;
  session: (Pick<VerifiedSession, 'userId' | 'accessJti' | 'refreshJti' | 'revokedAt'> & Partial<Pick<VerifiedSession, 'revokeReason'>>) | null;
  family: CheckedFamily | null;
  user: Pick<UserRecord, 'isActive'> | null;
}

/** A verified token whose record has its session and user (both present once checked). */
type Checked<R extends CheckedRecord> = {
  claims: TokenClaims;
  isRefreshToken: boolean;
  membership: R['membership'];
  session: NonNullable<R['session']>;
  /** The sign-in session the token belongs to. */
  family: NonNullable<R['family']>;
  user: NonNullable<R['user']>;
};

/** A verified Bearer token with what deciding access needs; `claims.sub` is the user, `claims.prn` the membership. */
export type VerifiedCaller = Checked<CallerVerificationRecord>;

/** A verified caller with the whole user row. */
export type VerifiedWithUser = Checked<UserVerificationRecord>;

/**
 * A Bearer token is valid only when its signature, expiry and revocation checks pass (its own
 * record's and its sign-in session's) and its user exists and is active. Checked against the
 * database on every request, so a revocation or a frozen user on another instance is seen at once.
 */
@Injectable()
export class TokenVerifier {
  constructor(
    private readonly sessions: TokenSessionRepository,
    private readonly codec: JwtCodec,
  ) {}

  /**
   * Verifies and loads the whole user, session and signing membership (refresh, scoped tokens,
   * revocation). A rotated refresh token presented for a refresh throws `RefreshTokenReuse`.
   */
  verify(token: string, use: TokenUse): Promise<VerifiedBearer> {
    return this.check(token, use, (membershipId, tokenId) => this.sessions.findForVerification(membershipId, tokenId));
  }

  /** Verifies and loads what access decisions need plus the whole user (/me). */
  verifyWithUser(token: string, use: TokenUse): Promise<VerifiedWithUser> {
    return this.check(token, use, (membershipId, tokenId) => this.sessions.findForUserVerification(membershipId, tokenId));
  }

  /** Verifies and loads only what access decisions need: cheaper, for every other authenticated route. */
  verifyCaller(token: string, use: TokenUse): Promise<VerifiedCaller> {
    return this.check(token, use, (membershipId, tokenId) => this.sessions.findForCallerVerification(membershipId, tokenId));
  }

  private async check<R extends CheckedRecord>(
    token: string,
    use: TokenUse,
    load: (membershipId: string, tokenId: string) => Promise<R | undefined>,
  ): Promise<Checked<R>> {
    const peeked = this.codec.peek(token);
    if (!peeked) throw invalid();
    const record = await load(peeked.prn, peeked.tokenId);
    if (!record) throw invalid();
    const { membership, session, family, user } = record;

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
    // The record is swept a few minutes after expiry; a signed, unexpired token without one is not ours.
    if (!session || !family || session.userId !== claims.sub) throw invalid();
    // A token issued before sessions has no tid: its sid named the record found, not the session.
    if (claims.tid !== undefined && claims.sid !== family.id) throw invalid();
    if (claims.jti !== (isRefreshToken ? session.refreshJti : session.accessJti)) throw invalid();
    if (family.revokedAt) throw new DomainError(CODES[use].revoked, 'The token has been revoked');
    if (session.revokedAt) {
      if (use === 'refresh' && session.revokeReason === ROTATED_REASON) {
        throw new RefreshTokenReuse({ membershipId: claims.prn, sessionId: family.id, userId: session.userId });
      }
      throw new DomainError(CODES[use].revoked, 'The token has been revoked');
    }
    if (!user) throw invalid();
    if (!user.isActive) throw userInactive();
    return { claims, isRefreshToken, membership, session, family, user };
  }
}
