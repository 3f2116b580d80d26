import { Injectable } from '@nestjs/common';
import { OAuthError } from '../common/oauth-error';
import type { GrantHandler, GrantRequest, TokenEndpointResponse } from './grants';
import { formField, requiredFormField } from './oauth-form';
import { OidcTokens } from './oidc-tokens';
import { spaceDelimited } from './request-parameters';

const invalidGrant = (): OAuthError => new OAuthError('invalid_grant', 'The refresh token is not valid');

/**
 * `grant_type=refresh_token` (RFC 6749 6): the client's own refresh token, from a grant that had
 * `offline_access`; rotated at each use. A rotated token used again is a reuse (OAuth 2.0 Security
 * BCP 4.14): one of its two holders is a thief, so the whole grant ends.
 */
@Injectable()
export class RefreshTokenGrant implements GrantHandler {
  readonly grantType = 'refresh_token';

  constructor(private readonly tokens: OidcTokens) {}

  async exchange(request: GrantRequest): Promise<TokenEndpointResponse> {
    const { membershipId, client, form } = request;
    const found = await this.tokens.lookupRefreshToken(membershipId, requiredFormField(form, 'refresh_token'));
    if (!found || found.record.clientId !== client.id) throw invalidGrant();
    if (found.state === 'rotated') {
      await this.tokens.revokeGrant(membershipId, found.grantId, found.record.userId, 'refresh_token_reuse');
      throw invalidGrant();
    }
    if (found.state !== 'active' || !found.user) throw invalidGrant();
    // The record holds the grant's scopes, not a narrowed access token's (OidcTokens.build).
    const granted = found.record.scopes ?? [];
    // RFC 6749 6: the access token may have a narrower scope, never a wider one; the new refresh
    // token keeps the grant's scope, so a later refresh without `scope` gets it all back.
    const scopeField = formField(form, 'scope');
    const asked = scopeField === undefined ? undefined : spaceDelimited(scopeField);
    if (asked?.some((scope) => !granted.includes(scope))) throw new OAuthError('invalid_scope', 'The scope exceeds what was granted');
    const { response } = await this.tokens.rotate(found, {
      membershipId,
      client,
      user: found.user,
      scopes: asked ? [...new Set(asked)] : granted,
      grantScopes: granted,
      metadata: { userAgent: request.userAgent },
    });
    return response;
  }
}
