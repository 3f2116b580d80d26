import { applyDecorators, Controller, Get, Headers, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/access-decorators';
import { type BackChannelRequest, ClientRequest } from './back-channel-route';
import { OAuthErrorDto, UserInfoDto, UserInfoForm } from './oauth-docs';
import { UserInfo } from './userinfo';
import { IssuerIdPipe } from './issuer-id.pipe';

/**
 * The UserInfo route, by GET or POST (OpenID Connect Core 5.3.1: a client may use either): public
 * to the service's guard, authenticated by the issuer's own access token. `no-store` comes with
 * every answer of the service.
 */
function UserInfoRoute(method: 'GET' | 'POST'): MethodDecorator {
  return applyDecorators(
    ...(method === 'GET' ? [Get('userinfo')] : [Post('userinfo'), HttpCode(200)]),
    Public(),
    ApiOperation(
      method === 'GET'
        ? { summary: 'UserInfo endpoint (OpenID Connect Core 5.3)', description: 'Bearer access token of this issuer; sub and the claims of its scopes.' }
        : {
            summary: 'UserInfo endpoint (POST)',
            description: 'As GET; the access token may come instead in a form-encoded body as `access_token` (RFC 6750 2.2), never in both.',
          },
    ),
    ...(method === 'POST' ? [ApiConsumes('application/x-www-form-urlencoded'), ApiBody({ type: UserInfoForm, required: false })] : []),
    ApiResponse({ status: 200, description: 'The claims', type: UserInfoDto }),
    ...(method === 'POST' ? [ApiResponse({ status: 400, description: 'The token sent both ways, or `access_token` repeated: WWW-Authenticate: Bearer error="invalid_request"', type: OAuthErrorDto })] : []),
    ApiResponse({ status: 401, description: 'WWW-Authenticate: Bearer error="invalid_token"', type: OAuthErrorDto }),
    ApiResponse({ status: 403, description: 'The access token lacks the openid scope: WWW-Authenticate: Bearer error="insufficient_scope"', type: OAuthErrorDto }),
  );
}

/** `<issuer>/userinfo`: authenticated by the OpenID Provider's own access tokens, so public to the service's guard. */
@ApiTags('openid-provider')
@Controller('oidc/:membershipId')
export class UserInfoController {
  constructor(private readonly userInfo: UserInfo) {}

  @UserInfoRoute('GET')
  get(@Param('membershipId', IssuerIdPipe) membershipId: string, @Headers('authorization') authorization: string | undefined) {
    return this.userInfo.claims(membershipId, authorization);
  }

  @UserInfoRoute('POST')
  post(@Param('membershipId', IssuerIdPipe) membershipId: string, @ClientRequest() request: BackChannelRequest) {
    return this.userInfo.claims(membershipId, request.authorization, request.form);
  }
}
