import { Injectable } from '@nestjs/common';
import { parseAuthorization } from '../common/authorization-header';
import { OAuthError } from '../common/oauth-error';
import { userClaims } from './oidc-claims';
import { OidcTokens } from './oidc-tokens';

/** `<issuer>/userinfo` (OpenID Connect Core 5.3): `sub` and the claims the access token's scopes release; the token needs `openid`. */
@Injectable()
export class UserInfo {
  constructor(private readonly tokens: OidcTokens) {}

  async claims(membershipId: string, authorization: string | undefined): Promise<Record<string, string | boolean>> {
    if (authorization === undefined) throw OAuthError.tokenRequired();
    const credentials = parseAuthorization(authorization);
    if (credentials?.scheme !== 'bearer') throw OAuthError.invalidToken('A Bearer access token is required');
    const { user, scopes } = await this.tokens.verifyAccessToken(membershipId, credentials.token);
    // OpenID Connect Core 5.3: userinfo answers the access token of an OpenID Connect request. A
    // token without `openid` (a refresh narrowed to other scopes, a device grant asked without it)
    // was not one, so it releases no claims here.
    if (!scopes.includes('openid')) throw OAuthError.insufficientScope('The access token lacks the openid scope', 'openid');
    return { sub: user.id, ...userClaims(user, scopes) };
  }
}
