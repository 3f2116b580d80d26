import { Injectable } from '@nestjs/common';
import { parseAuthorization } from '../common/authorization-header';
import { OAuthError } from '../common/oauth-error';
import { formField } from './oauth-form';
import { userClaims } from './oidc-claims';
import { OidcTokens } from './oidc-tokens';

/** `<issuer>/userinfo` (OpenID Connect Core 5.3): `sub` and the claims the access token's scopes release; the token needs `openid`. */
@Injectable()
export class UserInfo {
  constructor(private readonly tokens: OidcTokens) {}

  /**
   * `form` is a POST's form-encoded body, whose `access_token` (RFC 6750 2.2) a client may send
   * instead of the Authorization header; never both (RFC 6750 2: one method per request).
   */
  async claims(membershipId: string, authorization: string | undefined, form: Readonly<Record<string, unknown>> = {}): Promise<Record<string, string | boolean>> {
    const { user, scopes } = await this.tokens.verifyAccessToken(membershipId, accessTokenOf(authorization, form));
    // OpenID Connect Core 5.3: userinfo answers the access token of an OpenID Connect request. A
    // token without `openid` (a refresh narrowed to other scopes, a device grant asked without it)
    // was not one, so it releases no claims here.
    if (!scopes.includes('openid')) throw OAuthError.insufficientScope('The access token lacks the openid scope', 'openid');
    return { sub: user.id, ...userClaims(user, scopes) };
  }
}

/** The access token of a userinfo request: the Authorization header's Bearer token, or a POST body's `access_token`. */
function accessTokenOf(authorization: string | undefined, form: Readonly<Record<string, unknown>>): string {
  const posted = postedAccessToken(form);
  if (posted !== undefined) {
    if (authorization !== undefined) throw OAuthError.invalidRequest('Send the access token once: in the Authorization header or in the form body, not both');
    return posted;
  }
  if (authorization === undefined) throw OAuthError.tokenRequired();
  const credentials = parseAuthorization(authorization);
  if (credentials?.scheme !== 'bearer') throw OAuthError.invalidToken('A Bearer access token is required');
  return credentials.token;
}

/** The form's `access_token`; a repeated or over-long one is RFC 6750 3.1's `invalid_request`, with its Bearer challenge. */
function postedAccessToken(form: Readonly<Record<string, unknown>>): string | undefined {
  try {
    return formField(form, 'access_token');
  } catch (error) {
    if (error instanceof OAuthError) throw OAuthError.invalidRequest(error.message);
    throw error;
  }
}
