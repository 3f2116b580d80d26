import { Injectable } from '@nestjs/common';
import { parseAuthorization } from '../common/authorization-header';
import { OAuthError } from '../common/oauth-error';
import { userClaims } from './oidc-claims';
import { OidcTokens } from './oidc-tokens';

/** `<issuer>/userinfo` (OpenID Connect Core 5.3): `sub` and the claims the access token's scopes release. */
@Injectable()
export class UserInfo {
  constructor(private readonly tokens: OidcTokens) {}

  async claims(membershipId: string, authorization: string | undefined): Promise<Record<string, string | boolean>> {
    if (authorization === undefined) throw OAuthError.tokenRequired();
    const credentials = parseAuthorization(authorization);
    if (credentials?.scheme !== 'bearer') throw OAuthError.invalidToken('A Bearer access token is required');
    const { user, record } = await this.tokens.verifyAccessToken(membershipId, credentials.token);
    return { sub: user.id, ...userClaims(user, record.scopes ?? []) };
  }
}
