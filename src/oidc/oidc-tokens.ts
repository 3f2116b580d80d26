import { createHash, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { isPossibleId } from '../common/ids';
import { OAuthError } from '../common/oauth-error';
import type { UserRecord } from '../database/schema';
import { EventRecorder, type NewEvent } from '../events/event-recorder';
import { TokenRevoker } from '../sessions/token-revoker';
import { type NewTokenSession, TokenSessionRepository, type UsedUpByIssuance } from '../sessions/token-session.repository';
import { toUserResponse } from '../users/user.mapper';
import type { TokenEndpointResponse } from './grants';
import { Issuers } from './issuer';
import { userClaims } from './oidc-claims';
import type { OidcClient } from './oidc-clients';
import { type OidcTokenLookup, type OidcTokenRecord, OidcTokenRepository } from './oidc-token.repository';
import { digestOf, matchesDigest, newOpaqueSecret } from './secrets';
import { MembershipCache } from '../memberships/membership-cache';
import { SigningKeys, UnverifiableToken } from './signing-keys';
import { spaceDelimited } from './request-parameters';

/** The grants that issue tokens for a user (`grant` in TokenGenerated). */
export type OidcUserGrant = 'authorization_code' | 'refresh_token' | 'urn:ietf:params:oauth:grant-type:device_code';

/** Where the request came from, stored with the token record as sign-in stores it. */
export interface OidcRequestMetadata {
  ipAddress?: string;
  userAgent?: string;
}

/** Everything an issuance for a user needs; the grant handler has checked the grant itself. */
export interface UserTokenRequest {
  membershipId: string;
  client: OidcClient;
  user: UserRecord;
  /** The sign-in session the tokens join (the single sign-on session), or `new` for a session of their own (device flow). */
  session: { id: string } | 'new';
  /** The access token's scopes (and the ID token's claims). */
  scopes: readonly string[];
  /**
   * The scopes the grant holds, which its refresh token keeps (RFC 6749 6: a new refresh token's
   * scope is identical to the one presented); wider than `scopes` when a refresh asked for fewer.
   * Absent: `scopes`.
   */
  grantScopes?: readonly string[];
  nonce?: string;
  authTime: Date;
  amr: readonly string[] | null;
  /** RFC 8707: the access token's audience instead of the client. */
  resource?: string;
  grant: OidcUserGrant;
  /** The grant's first record; absent for a grant's first issuance, whose record becomes it. */
  grantId?: string;
  /** The authorization code or the approved device code this issuance uses up, in the same statement. */
  usesUp?: Extract<UsedUpByIssuance, { kind: 'authorization_code' | 'device_code' }>;
  metadata: OidcRequestMetadata;
}

/** A refresh token's record as found, and what state it is in (the caller decides what each means). */
export interface RefreshTokenLookup extends OidcTokenLookup {
  /** `rotated`: used once already (a second use is a reuse); `revoked`: ended otherwise; `expired`; `active`. */
  state: 'active' | 'rotated' | 'revoked' | 'expired';
  grantId: string;
}

/** A valid access token: its claims, record and user. */
export interface VerifiedAccessToken {
  claims: JWTPayload;
  /** The access token's own scopes (its signed `scope`), which may be fewer than its record's grant holds. */
  scopes: string[];
  record: OidcTokenRecord;
  user: UserRecord;
}

/** The revoke reason a rotated record carries (TokenSessionRepository's `consume` writes it). */
const ROTATED = 'refreshed';
const MAX_METADATA_LENGTH = 512;
const clip = (value: string | undefined | null): string | null => (value ? value.slice(0, MAX_METADATA_LENGTH) : null);
const epoch = (date: Date): number => Math.floor(date.getTime() / 1000);

/**
 * The OpenID Provider's tokens for users (docs/oidc.md, "Tokens"): RFC 9068 access tokens, ID
 * tokens and opaque refresh tokens, each issuance one `oidc` record in a sign-in session, so every
 * revocation trigger of that session (logout-all, freeze, password change, MFA reset, the single
 * sign-on's logout) ends them at once. A grant is its first record and the records rotated from it
 * (their `parent_id`), so a reuse can end one client's grant without the user's other sign-ins.
 */
@Injectable()
export class OidcTokens {
  constructor(
    private readonly issuers: Issuers,
    private readonly keys: SigningKeys,
    private readonly memberships: MembershipCache,
    private readonly sessions: TokenSessionRepository,
    private readonly records: OidcTokenRepository,
    private readonly revoker: TokenRevoker,
    private readonly recorder: EventRecorder,
  ) {}

  /**
   * Signs and stores a grant's tokens: the access token, an ID token with `openid`, a refresh token
   * with `offline_access` when the client may refresh. The record and its TokenGenerated event are
   * written in one statement (joining the caller's transaction when one is open), which also uses
   * up the request's authorization code or device code. Undefined when nothing was issued: the
   * sign-in session has ended, or the code was used (or a device code denied) meanwhile.
   */
  async issueForUser(request: UserTokenRequest): Promise<{ response: TokenEndpointResponse; tokenId: string } | undefined> {
    const issued = await this.build(request);
    if (!(await this.store(issued, [this.generatedEvent(request, issued.response)], request.usesUp))) return undefined;
    return { response: issued.response, tokenId: issued.record.id };
  }

  /**
   * A refresh (RFC 6749 6): new tokens in the grant, the presented record marked used in the same
   * statement. When it was used meanwhile (a concurrent reuse) nothing is issued and the grant ends.
   */
  async rotate(
    found: RefreshTokenLookup,
    request: Omit<UserTokenRequest, 'grant' | 'grantId' | 'usesUp' | 'session' | 'authTime' | 'amr' | 'nonce' | 'resource'>,
  ): Promise<{ response: TokenEndpointResponse; tokenId: string }> {
    const full: UserTokenRequest = {
      ...request,
      grant: 'refresh_token',
      grantId: found.grantId,
      session: { id: found.record.sessionId },
      authTime: found.record.authTime ?? new Date(),
      amr: found.record.amr,
      // RFC 8707: the refreshed access token is for the resource the grant was for, as its first was.
      resource: found.record.resource ?? undefined,
    };
    const issued = await this.build(full);
    const generated = this.generatedEvent(full, issued.response);
    const stored = await this.store(issued, [{ ...generated, eventType: 'TokenRefreshed' }, generated], {
      kind: 'refreshed_record',
      tokenId: found.record.id,
      revokedBy: found.record.userId,
    });
    if (!stored) {
      await this.revokeGrant(request.membershipId, found.grantId, found.record.userId, 'refresh_token_reuse');
      throw new OAuthError('invalid_grant', 'The refresh token is not valid');
    }
    return { response: issued.response, tokenId: issued.record.id };
  }

  /** Ends a grant (code reuse, refresh reuse, RFC 7009), recording TokenRevoked per record. */
  async revokeGrant(membershipId: string, grantId: string, utilizerId: string, reason: string): Promise<number> {
    return this.recorder.transaction((record) => this.revoker.revokeGrant(record, membershipId, grantId, utilizerId, reason));
  }

  /**
   * An access token of this issuer that is still good: ES256 `at+jwt` signature of a key of the
   * JWKS, its record not revoked, its session not revoked, its user active. Anything else is
   * RFC 6750's `invalid_token`, one answer for all.
   */
  async verifyAccessToken(membershipId: string, token: string): Promise<VerifiedAccessToken> {
    let claims: JWTPayload;
    try {
      claims = await this.keys.verify(membershipId, token, { issuer: this.issuers.of(membershipId), typ: 'at+jwt' });
    } catch (error) {
      if (error instanceof UnverifiableToken) throw OAuthError.invalidToken();
      throw error;
    }
    const found = isPossibleId(claims.jti) ? await this.records.find(membershipId, claims.jti) : undefined;
    const valid =
      found?.user?.isActive &&
      found.clientActive !== false &&
      found.session &&
      !found.session.revokedAt &&
      !found.record.revokedAt &&
      found.record.accessJti === claims.jti &&
      found.record.userId === claims.sub &&
      found.record.accessExpiresAt.getTime() > Date.now();
    if (!valid || !found?.user) throw OAuthError.invalidToken();
    return { claims, scopes: typeof claims.scope === 'string' ? spaceDelimited(claims.scope) : [], record: found.record, user: found.user };
  }

  /**
   * The record an opaque refresh token names (`<record id>.<secret>`, only the secret's digest
   * stored), in whatever state; undefined when it names none (wrong secret, other membership,
   * malformed). The refresh grant, introspection and revocation each decide what a state means.
   */
  async lookupRefreshToken(membershipId: string, token: string): Promise<RefreshTokenLookup | undefined> {
    const separator = token.indexOf('.');
    if (separator <= 0) return undefined;
    const recordId = token.slice(0, separator);
    if (!isPossibleId(recordId)) return undefined;
    const found = await this.records.find(membershipId, recordId);
    if (!found || !matchesDigest(token.slice(separator + 1), found.record.refreshJti)) return undefined;
    const { record } = found;
    const state: RefreshTokenLookup['state'] =
      record.revokedAt && record.revokeReason === ROTATED && !found.session?.revokedAt
        ? 'rotated'
        : record.revokedAt || found.session?.revokedAt || !found.user?.isActive || found.clientActive === false
          ? 'revoked'
          : !record.refreshExpiresAt || record.refreshExpiresAt.getTime() <= Date.now()
            ? 'expired'
            : 'active';
    return { ...found, state, grantId: record.parentId ?? record.id };
  }

  private async build(request: UserTokenRequest): Promise<{ record: NewTokenSession; opensSession: boolean; response: TokenEndpointResponse }> {
    // The membership's lifetimes from the instance's cache (as the specification lets membership
    // settings be cached): one round trip less for every issuance.
    const lifetimes = await this.memberships.get(request.membershipId);
    if (!lifetimes) throw new OAuthError('invalid_request', 'The membership does not exist');
    const { client, user, scopes, membershipId } = request;
    const issuer = this.issuers.of(membershipId);
    const issuedAt = Math.floor(Date.now() / 1000);
    const id = randomUUID();
    const sessionId = request.session === 'new' ? id : request.session.id;
    const accessExpiresAt = new Date((issuedAt + lifetimes.expiresIn) * 1000);
    const grantScopes = request.grantScopes ?? scopes;
    const refreshable = grantScopes.includes('offline_access') && client.oidc.grant_types.includes('refresh_token');
    const refreshSecret = refreshable ? newOpaqueSecret() : undefined;
    const refreshExpiresAt = refreshable ? new Date((issuedAt + lifetimes.refreshTokenExpiresIn) * 1000) : null;
    const amr = request.amr?.length ? { amr: [...request.amr] } : {};
    const common = { iss: issuer, sub: user.id, iat: issuedAt, exp: issuedAt + lifetimes.expiresIn, auth_time: epoch(request.authTime), sid: sessionId, ...amr };
    const accessToken = await this.keys.sign(
      membershipId,
      { ...common, aud: request.resource ?? client.id, client_id: client.id, scope: scopes.join(' '), jti: id },
      'at+jwt',
    );
    const response: TokenEndpointResponse = { access_token: accessToken, token_type: 'Bearer', expires_in: lifetimes.expiresIn, scope: scopes.join(' ') };
    if (scopes.includes('openid')) {
      const nonce = request.nonce ? { nonce: request.nonce } : {};
      const idTokenClaims = { ...common, aud: client.id, azp: client.id, ...nonce, at_hash: accessTokenHash(accessToken), ...userClaims(user, scopes) };
      response.id_token = await this.keys.sign(membershipId, idTokenClaims, 'JWT');
    }
    if (refreshSecret) response.refresh_token = `${id}.${refreshSecret}`;
    const record: NewTokenSession = {
      id,
      sessionId,
      membershipId,
      userId: user.id,
      kind: 'oidc',
      clientId: client.id,
      grantType: request.grant,
      parentId: request.grantId ?? id,
      authTime: request.authTime,
      amr: request.amr ? [...request.amr] : null,
      // The grant's scopes: a later refresh without `scope` gets them all back (RFC 6749 6).
      scopes: [...grantScopes],
      resource: request.resource ?? null,
      accessJti: id,
      refreshJti: refreshSecret ? digestOf(refreshSecret) : null,
      accessExpiresAt,
      refreshExpiresAt,
      expiresAt: refreshExpiresAt && refreshExpiresAt > accessExpiresAt ? refreshExpiresAt : accessExpiresAt,
      ipAddress: clip(request.metadata.ipAddress),
      userAgent: clip(request.metadata.userAgent),
      createdAt: new Date(issuedAt * 1000),
    };
    return { record, opensSession: request.session === 'new', response };
  }

  private async store(
    issued: { record: NewTokenSession; opensSession: boolean },
    events: NewEvent[],
    usedUp?: UsedUpByIssuance,
  ): Promise<boolean> {
    const rows = this.recorder.prepare(events);
    const stored = await this.sessions.issue(issued.record, rows, issued.opensSession, usedUp);
    if (stored) this.recorder.publish(rows);
    return stored;
  }

  /** TokenGenerated: the user, the grant and the client, never a token string. */
  private generatedEvent(request: UserTokenRequest, response: TokenEndpointResponse): NewEvent {
    return {
      membershipId: request.membershipId,
      eventType: 'TokenGenerated',
      utilizerId: request.user.id,
      document: {
        user: toUserResponse(request.user),
        user_id: request.user.id,
        token_type: response.token_type,
        expires_in: response.expires_in,
        created_at: new Date().toISOString(),
        grant: request.grant,
        client_id: request.client.id,
        scopes: [...request.scopes],
        ...(request.amr?.length ? { amr: [...request.amr] } : {}),
      },
    };
  }
}

/**
 * The ID token's `at_hash` (OpenID Connect Core 3.1.3.6, 3.3.2.11): the left half of the access
 * token's SHA-256 (the hash of ES256), base64url. Optional in the code flow, but a client that
 * finds it can check that the access token came with this ID token.
 */
function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken).digest().subarray(0, 16).toString('base64url');
}
