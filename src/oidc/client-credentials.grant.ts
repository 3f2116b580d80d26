import { Injectable, type OnModuleInit } from '@nestjs/common';
import { newId } from '../common/ids';
import { OAuthError } from '../common/oauth-error';
import { EventRecorder } from '../events/event-recorder';
import { MembershipCache } from '../memberships/membership-cache';
import type { GrantHandler, GrantRequest, TokenEndpointResponse } from './grants';
import { Issuers } from './issuer';
import { formField } from './oauth-form';
import { OidcClientTokenRepository } from './oidc-client-token.repository';
import { parseResourceParameter, parseScopeParameter } from './request-parameters';
import { SigningKeys } from './signing-keys';
import { OidcTokenEndpoint } from './token-endpoint';

/**
 * The scopes a client may ask for itself. Every scope of `scopes_supported` (openid, profile,
 * email, offline_access) is about a user, and a client_credentials token has none: none of them
 * makes sense here, and the service defines no resource-server scopes (an OpenID Provider access
 * token opens no route of the management API). So none is allowed; the token says what it is by
 * `sub`/`client_id` and, with RFC 8707's `resource`, by `aud`.
 */
export const CLIENT_CREDENTIALS_SCOPES: readonly string[] = [];

/**
 * `grant_type=client_credentials` (RFC 6749 4.4): an RFC 9068 access token for the client itself,
 * `sub` the client id. The endpoint has authenticated the client and checked its grant_types,
 * which never hold client_credentials for a public client (applications refuse it); the check
 * here stays, since a public client's "authentication" proves nothing.
 */
@Injectable()
export class ClientCredentialsGrant implements GrantHandler, OnModuleInit {
  readonly grantType = 'client_credentials';

  constructor(
    private readonly endpoint: OidcTokenEndpoint,
    private readonly issuers: Issuers,
    private readonly keys: SigningKeys,
    private readonly memberships: MembershipCache,
    private readonly tokens: OidcClientTokenRepository,
    private readonly recorder: EventRecorder,
  ) {}

  onModuleInit(): void {
    this.endpoint.register(this);
  }

  async exchange({ membershipId, client, form }: GrantRequest): Promise<TokenEndpointResponse> {
    if (client.oidc.public) throw new OAuthError('unauthorized_client', 'A public client cannot use client_credentials');
    const scopes = parseScopeParameter(formField(form, 'scope'), CLIENT_CREDENTIALS_SCOPES, 'is not available to client_credentials (it has no user)');
    const resource = parseResourceParameter(formField(form, 'resource'));
    // The membership's lifetimes from the instance's cache, as every issuance reads them.
    const lifetimes = await this.memberships.get(membershipId);
    if (!lifetimes) throw OAuthError.invalidClient();
    const expiresIn = lifetimes.expiresIn;
    const jti = newId();
    const issuedAt = Math.floor(Date.now() / 1000);
    const scope = scopes.join(' ');
    const accessToken = await this.keys.sign(
      membershipId,
      {
        iss: this.issuers.of(membershipId),
        sub: client.id,
        aud: resource ?? client.id,
        client_id: client.id,
        scope,
        jti,
        iat: issuedAt,
        exp: issuedAt + expiresIn,
      },
      'at+jwt',
    );
    await this.recorder.transaction(async (record) => {
      await this.tokens.insert({ id: jti, membershipId, clientId: client.id, scopes, expiresAt: new Date((issuedAt + expiresIn) * 1000) });
      record({
        membershipId,
        eventType: 'TokenGenerated',
        utilizerId: client.id,
        document: {
          grant: this.grantType,
          client_id: client.id,
          token_id: jti,
          token_type: 'Bearer',
          expires_in: expiresIn,
          scope,
          aud: resource ?? client.id,
          created_at: new Date(issuedAt * 1000).toISOString(),
        },
      });
    });
    return { access_token: accessToken, token_type: 'Bearer', expires_in: expiresIn, scope };
  }
}
