import { Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { isPossibleId } from '../common/ids';
import { OAuthError } from '../common/oauth-error';
import { EventRecorder } from '../events/event-recorder';
import { Issuers } from './issuer';
import { formField, requiredFormField } from './oauth-form';
import { OidcClientTokenRepository } from './oidc-client-token.repository';
import { type ClientAuthMethod, type ClientAuthRequest, type OidcClient, OidcClients } from './oidc-clients';
import { OidcTokens } from './oidc-tokens';
import { SigningKeys, UnverifiableToken } from './signing-keys';

/** RFC 7662 2.2's answer: `{active: false}` alone, or the token's facts. */
export interface IntrospectionResponse {
  active: boolean;
  sub?: string;
  client_id?: string;
  scope?: string;
  exp?: number;
  iat?: number;
  iss?: string;
  aud?: string | string[];
  jti?: string;
  token_type?: 'Bearer';
  username?: string;
}

const INACTIVE: IntrospectionResponse = { active: false };

/** `token_type_hint` values of RFC 7009 2.1 / RFC 7662 2.1 (others are ignored, as both allow). */
type TokenTypeHint = 'access_token' | 'refresh_token';

/** A token of this issuer, found and checked: what it says and how to end its grant. */
interface FoundToken {
  /** The client the token was issued to. */
  clientId: string;
  kind: TokenTypeHint;
  active: boolean;
  answer: Omit<IntrospectionResponse, 'active'>;
  /** Ends the token's grant (called only for the client it was issued to). */
  revoke: (client: OidcClient) => Promise<void>;
}

/**
 * RFC 7662 introspection and RFC 7009 revocation at `<issuer>/introspect` and `<issuer>/revoke`.
 *
 * Who may introspect what (the contract is silent): a confidential client, authenticated by its
 * secret, may introspect any access token of the issuer, whoever it was issued to: it acts as a
 * resource server, which receives other clients' tokens, and access tokens verify from the JWKS
 * anyway (introspection adds only whether they were revoked). Refresh tokens are credentials of
 * their own client alone, never sent to a resource server: only that client learns of them. A
 * public client proves nothing by naming itself, so it may introspect only its own tokens.
 * Everything else, like unknown, expired, revoked or another membership's tokens, is `{active: false}`.
 *
 * Revocation ends a token only for the client it was issued to (RFC 7009 2.1); for anyone else it
 * does nothing and answers 200 all the same, so the answer tells nothing about the token.
 */
@Injectable()
export class TokenIntrospection {
  constructor(
    private readonly clients: OidcClients,
    private readonly issuers: Issuers,
    private readonly keys: SigningKeys,
    private readonly clientTokens: OidcClientTokenRepository,
    private readonly userTokens: OidcTokens,
    private readonly recorder: EventRecorder,
  ) {}

  async introspect(membershipId: string, request: ClientAuthRequest): Promise<IntrospectionResponse> {
    const { client, method } = await this.clients.authenticate(membershipId, request);
    const { token, hint } = tokenParameters(request.form);
    const found = await this.find(membershipId, token, hint);
    if (!found?.active || !mayIntrospect(client, method, found)) return INACTIVE;
    return { active: true, ...found.answer };
  }

  async revoke(membershipId: string, request: ClientAuthRequest): Promise<void> {
    const { client } = await this.clients.authenticate(membershipId, request);
    const { token, hint } = tokenParameters(request.form);
    const found = await this.find(membershipId, token, hint);
    if (found?.active && found.clientId === client.id) await found.revoke(client);
  }

  /** The token among the issuer's: the hint decides which kind is tried first, both are tried. */
  private async find(membershipId: string, token: string, hint: TokenTypeHint | undefined): Promise<FoundToken | undefined> {
    const finders = [
      (): Promise<FoundToken | undefined> => this.findAccessToken(membershipId, token),
      (): Promise<FoundToken | undefined> => this.findRefreshToken(membershipId, token),
    ];
    if (hint === 'refresh_token') finders.reverse();
    for (const finder of finders) {
      const found = await finder();
      if (found) return found;
    }
    return undefined;
  }

  /** An RFC 9068 access token of this issuer: a client's own (client_credentials) by its row. */
  private async findAccessToken(membershipId: string, token: string): Promise<FoundToken | undefined> {
    const issuer = this.issuers.of(membershipId);
    let claims: JWTPayload;
    try {
      claims = await this.keys.verify(membershipId, token, { issuer, typ: 'at+jwt' });
    } catch (error) {
      if (error instanceof UnverifiableToken) return undefined;
      throw error;
    }
    if (!isPossibleId(claims.jti) || typeof claims.client_id !== 'string') return undefined;
    const row = await this.clientTokens.find(membershipId, claims.jti);
    if (!row) return this.userAccessToken(membershipId, token, claims);
    if (row.clientId !== claims.client_id) return undefined;
    // A client made inactive, or no longer a client, holds no live token (a deleted one's rows are gone with it).
    const holder = row.revokedAt ? undefined : await this.clients.find(membershipId, row.clientId);
    return {
      clientId: row.clientId,
      kind: 'access_token',
      active: holder !== undefined && !row.revokedAt && row.expiresAt.getTime() > Date.now(),
      answer: {
        sub: row.clientId,
        client_id: row.clientId,
        scope: row.scopes.join(' '),
        exp: claims.exp,
        iat: claims.iat,
        iss: issuer,
        aud: claims.aud,
        jti: row.id,
        token_type: 'Bearer',
      },
      revoke: async (client) => {
        await this.recorder.transaction(async (record) => {
          const revoked = await this.clientTokens.revoke(membershipId, row.id, client.id, REVOKED_BY_CLIENT);
          if (!revoked) return;
          record({
            membershipId,
            eventType: 'TokenRevoked',
            utilizerId: client.id,
            document: {
              grant: 'client_credentials',
              client_id: client.id,
              token_id: revoked.id,
              token_type: 'Bearer',
              expire_time: revoked.expiresAt.toISOString(),
              reason: REVOKED_BY_CLIENT,
            },
          });
        });
      },
    };
  }

  /**
   * A user's access token (an OpenID Provider grant's record): valid as OidcTokens checks it (record,
   * session, user); found but invalid is inactive with nothing to revoke (its grant has ended already,
   * or its session, or its user is inactive: every one of those ends the grant's tokens by itself).
   */
  private async userAccessToken(membershipId: string, token: string, claims: JWTPayload): Promise<FoundToken | undefined> {
    if (typeof claims.client_id !== 'string') return undefined;
    let verified: Awaited<ReturnType<OidcTokens['verifyAccessToken']>>;
    try {
      verified = await this.userTokens.verifyAccessToken(membershipId, token);
    } catch (error) {
      if (error instanceof OAuthError) return { clientId: claims.client_id, kind: 'access_token', active: false, answer: {}, revoke: async () => undefined };
      throw error;
    }
    const { record } = verified;
    if (!record.clientId) return undefined;
    return {
      clientId: record.clientId,
      kind: 'access_token',
      active: true,
      answer: {
        sub: record.userId,
        client_id: record.clientId,
        scope: verified.scopes.join(' '),
        exp: verified.claims.exp,
        iat: verified.claims.iat,
        iss: this.issuers.of(membershipId),
        aud: verified.claims.aud,
        jti: record.accessJti,
        token_type: 'Bearer',
      },
      revoke: (client) => this.endUserGrant(membershipId, record.parentId ?? record.id, client),
    };
  }

  /** A user grant's opaque refresh token (`<record id>.<secret>`), active only in state `active`. */
  private async findRefreshToken(membershipId: string, token: string): Promise<FoundToken | undefined> {
    const found = await this.userTokens.lookupRefreshToken(membershipId, token);
    const clientId = found?.record.clientId;
    if (!found || !clientId) return undefined;
    const { record } = found;
    return {
      clientId,
      kind: 'refresh_token',
      active: found.state === 'active',
      answer: {
        sub: record.userId,
        client_id: clientId,
        scope: (record.scopes ?? []).join(' '),
        exp: record.refreshExpiresAt ? epochOf(record.refreshExpiresAt) : undefined,
        iat: epochOf(record.createdAt),
        iss: this.issuers.of(membershipId),
        token_type: 'Bearer',
      },
      revoke: (client) => this.endUserGrant(membershipId, found.grantId, client),
    };
  }

  /**
   * RFC 7009 2.1: revoking either token of a user's grant ends the grant (every record rotated from
   * its first: access and refresh tokens alike), through the revocation machinery every trigger
   * uses, one TokenRevoked per record with the client. The user's session and other grants go on.
   */
  private async endUserGrant(membershipId: string, grantId: string, client: OidcClient): Promise<void> {
    await this.userTokens.revokeGrant(membershipId, grantId, client.id, REVOKED_BY_CLIENT);
  }
}

const REVOKED_BY_CLIENT = 'revoked_by_client';
const epochOf = (date: Date): number => Math.floor(date.getTime() / 1000);

function tokenParameters(form: Readonly<Record<string, unknown>>): { token: string; hint: TokenTypeHint | undefined } {
  const token = requiredFormField(form, 'token');
  const hint = formField(form, 'token_type_hint');
  return { token, hint: hint === 'access_token' || hint === 'refresh_token' ? hint : undefined };
}

function mayIntrospect(client: OidcClient, method: ClientAuthMethod, found: FoundToken): boolean {
  if (found.clientId === client.id) return true;
  return method !== 'none' && found.kind === 'access_token';
}
