import { Injectable } from '@nestjs/common';
import type { JWTPayload } from 'jose';
import { EventRecorder } from '../events/event-recorder';
import { Issuers } from './issuer';
import { formField, requiredFormField } from './oauth-form';
import { OidcClientTokenRepository } from './oidc-client-token.repository';
import { type ClientAuthMethod, type ClientAuthRequest, type OidcClient, OidcClients } from './oidc-clients';
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
    const finders = [(): Promise<FoundToken | undefined> => this.findAccessToken(membershipId, token)];
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
    if (typeof claims.jti !== 'string' || typeof claims.client_id !== 'string') return undefined;
    const row = await this.clientTokens.find(membershipId, claims.jti);
    if (!row || row.clientId !== claims.client_id) return undefined;
    return {
      clientId: row.clientId,
      kind: 'access_token',
      active: !row.revokedAt && row.expiresAt.getTime() > Date.now(),
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
          const revoked = await this.clientTokens.revoke(membershipId, row.id, client.id, 'revoked_by_client');
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
              reason: 'revoked_by_client',
            },
          });
        });
      },
    };
  }
}

function tokenParameters(form: Readonly<Record<string, unknown>>): { token: string; hint: TokenTypeHint | undefined } {
  const token = requiredFormField(form, 'token');
  const hint = formField(form, 'token_type_hint');
  return { token, hint: hint === 'access_token' || hint === 'refresh_token' ? hint : undefined };
}

function mayIntrospect(client: OidcClient, method: ClientAuthMethod, found: FoundToken): boolean {
  if (found.clientId === client.id) return true;
  return method !== 'none' && found.kind === 'access_token';
}
