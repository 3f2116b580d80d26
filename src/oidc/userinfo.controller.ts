import { Controller, Get, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../common/access-decorators';
import { OAuthErrorDto, UserInfoDto } from './oauth-docs';
import { UserInfo } from './userinfo';
import { IssuerIdPipe } from './issuer-id.pipe';

/** `<issuer>/userinfo`: authenticated by the OpenID Provider's own access tokens, so public to the service's guard. */
@ApiTags('openid-provider')
@Controller('oidc/:membershipId')
export class UserInfoController {
  constructor(private readonly userInfo: UserInfo) {}

  @Get('userinfo')
  @Public()
  @ApiOperation({ summary: 'UserInfo endpoint (OpenID Connect Core 5.3)', description: 'Bearer access token of this issuer; sub and the claims of its scopes.' })
  @ApiResponse({ status: 200, description: 'The claims', type: UserInfoDto })
  @ApiResponse({ status: 401, description: 'WWW-Authenticate: Bearer error="invalid_token"', type: OAuthErrorDto })
  get(@Param('membershipId', IssuerIdPipe) membershipId: string, @Headers('authorization') authorization: string | undefined, @Res({ passthrough: true }) response: Response) {
    response.setHeader('Cache-Control', 'no-store');
    return this.userInfo.claims(membershipId, authorization);
  }

  @Post('userinfo')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'UserInfo endpoint (POST)', description: 'As GET.' })
  @ApiResponse({ status: 200, description: 'The claims', type: UserInfoDto })
  @ApiResponse({ status: 401, description: 'WWW-Authenticate: Bearer error="invalid_token"', type: OAuthErrorDto })
  post(@Param('membershipId', IssuerIdPipe) membershipId: string, @Headers('authorization') authorization: string | undefined, @Res({ passthrough: true }) response: Response) {
    response.setHeader('Cache-Control', 'no-store');
    return this.userInfo.claims(membershipId, authorization);
  }
}
