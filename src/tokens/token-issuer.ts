import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { UserRecord } from '../database/schema';
import { JwtCodec, type TokenClaims } from './jwt-codec';
import type { NewTokenSession, SigningMembership } from '../sessions/token-session.repository';
import type { SessionMetadata, TokenResponse } from './token.dto';

/** The specification's default lifetime of a scoped token: 12 hours. */
export const DEFAULT_SCOPED_TOKEN_LIFETIME = 43_200;

const MAX_METADATA_LENGTH = 512;
const clip = (value: string | undefined): string | null => (value ? value.slice(0, MAX_METADATA_LENGTH) : null);

/**
 * A device code approved with a scoped token (contract, "Decisions of the third review"): the poll
 * gets a scoped token with these scopes, in the approving token's session (`tokenId` its parent),
 * living no longer than the approving token (`until`).
 */
export interface ScopedApproval {
  scopes: readonly string[];
  sessionId: string;
  tokenId: string;
  until: Date;
}

/** A new token record and the signed tokens that name it; nothing is stored yet. */
export interface IssuedTokens {
  session: NewTokenSession;
  /** True for a sign-in: storing the record opens its sign-in session too. */
  opensSession: boolean;
  response: TokenResponse;
}

/** Builds token sessions and signs their JWTs; the caller stores the session with its events. */
@Injectable()
export class TokenIssuer {
  constructor(private readonly codec: JwtCodec) {}

  private baseClaims(
    membership: SigningMembership,
    user: UserRecord,
    session: Pick<NewTokenSession, 'id' | 'sessionId'>,
  ): Omit<TokenClaims, 'iat' | 'nbf' | 'exp' | 'jti'> {
    const claims: Omit<TokenClaims, 'iat' | 'nbf' | 'exp' | 'jti'> = {
      sub: user.id,
      prn: membership.id,
      sid: session.sessionId,
      tid: session.id,
      iss: membership.name,
      aud: membership.slug,
      unique_name: user.username,
      email: user.emailAddress,
    };
    if (user.firstname) claims.given_name = user.firstname;
    if (user.lastname) claims.family_name = user.lastname;
    return claims;
  }

  /**
   * An access + refresh pair, carrying the given scopes (a refresh keeps the original's; a device
   * code approved with a scoped token gives the approver's) and the session's `amr`. Without a `sessionId` it starts a
   * sign-in session whose id its record shares; a refresh continues the session of the pair it
   * refreshes.
   */
  pair(
    membership: SigningMembership,
    user: UserRecord,
    metadata: SessionMetadata,
    refreshed: { sessionId?: string; scopes: readonly string[] | null; amr?: readonly string[] | null } | null = null,
  ): IssuedTokens {
    const issuedAt = Math.floor(Date.now() / 1000);
    const tokenId = randomUUID();
    const scopes = refreshed?.scopes ?? null;
    const accessJti = randomUUID();
    const refreshJti = randomUUID();
    const accessExpiresAt = new Date((issuedAt + membership.expiresIn) * 1000);
    const refreshExpiresAt = new Date((issuedAt + membership.refreshTokenExpiresIn) * 1000);
    const session: NewTokenSession = {
      id: tokenId,
      sessionId: refreshed?.sessionId ?? tokenId,
      membershipId: membership.id,
      userId: user.id,
      kind: 'pair',
      scopes: scopes ? [...scopes] : null,
      accessJti,
      refreshJti,
      accessExpiresAt,
      refreshExpiresAt,
      expiresAt: accessExpiresAt > refreshExpiresAt ? accessExpiresAt : refreshExpiresAt,
      ipAddress: clip(metadata.ipAddress),
      userAgent: clip(metadata.userAgent),
      createdAt: new Date(issuedAt * 1000),
    };
    const base = { ...this.baseClaims(membership, user, session), ...amrClaim(refreshed?.amr) };
    const scopeClaim = scopes?.length ? { scope: scopes.join(' ') } : {};
    const response: TokenResponse = {
      token_type: 'Bearer',
      access_token: this.codec.sign({ ...base, ...scopeClaim, jti: accessJti }, issuedAt, membership.expiresIn, membership.secretKey),
      expires_in: membership.expiresIn,
      refresh_token: this.codec.sign(
        { ...base, ...scopeClaim, jti: refreshJti, refresh_token: true },
        issuedAt,
        membership.refreshTokenExpiresIn,
        membership.secretKey,
      ),
      refresh_token_expires_in: membership.refreshTokenExpiresIn,
      created_at: session.createdAt.toISOString(),
    };
    if (scopes?.length) response.scopes = [...scopes];
    return { session, opensSession: refreshed?.sessionId === undefined, response };
  }

  /**
   * A scoped access token without refresh token, in the sign-in session of the token it came from;
   * `maxLifetime` (seconds) caps the membership's scoped-token lifetime.
   */
  scoped(
    membership: SigningMembership,
    user: UserRecord,
    origin: { sessionId: string; parentId: string; amr?: readonly string[] | null },
    scopes: readonly string[],
    metadata: SessionMetadata,
    maxLifetime = Number.POSITIVE_INFINITY,
  ): IssuedTokens {
    const issuedAt = Math.floor(Date.now() / 1000);
    const lifetime = Math.min(membership.scopedTokenExpiresIn ?? DEFAULT_SCOPED_TOKEN_LIFETIME, maxLifetime);
    const accessJti = randomUUID();
    const expiresAt = new Date((issuedAt + lifetime) * 1000);
    const session: NewTokenSession = {
      id: randomUUID(),
      sessionId: origin.sessionId,
      membershipId: membership.id,
      userId: user.id,
      kind: 'scoped',
      parentId: origin.parentId,
      scopes: [...scopes],
      accessJti,
      accessExpiresAt: expiresAt,
      expiresAt,
      ipAddress: clip(metadata.ipAddress),
      userAgent: clip(metadata.userAgent),
      createdAt: new Date(issuedAt * 1000),
    };
    const accessToken = this.codec.sign(
      { ...this.baseClaims(membership, user, session), ...amrClaim(origin.amr), scope: scopes.join(' '), jti: accessJti },
      issuedAt,
      lifetime,
      membership.secretKey,
    );
    return {
      session,
      opensSession: false,
      response: {
        token_type: 'Bearer',
        access_token: accessToken,
        expires_in: lifetime,
        created_at: session.createdAt.toISOString(),
        scopes: [...scopes],
      },
    };
  }
}

/** RFC 8176 methods as the `amr` claim; none when the session has none (a provider sign-in alone). */
function amrClaim(amr: readonly string[] | null | undefined): Pick<TokenClaims, 'amr'> {
  return amr?.length ? { amr: [...amr] } : {};
}
