import { Controller, Param, Res } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { type BackChannelRequest, BackChannelRoute, ClientRequest } from './back-channel-route';
import type { TokenEndpointResponse } from './grants';
import { IssuerIdPipe } from './issuer-id.pipe';
import { OidcTokenEndpoint } from './token-endpoint';

class TokenRequestForm {
  @ApiProperty({ enum: ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code'] }) grant_type!: string;
  @ApiPropertyOptional({ description: 'authorization_code: the code the redirect carried' }) code?: string;
  @ApiPropertyOptional({ description: 'authorization_code: the redirect_uri of the authorization request' }) redirect_uri?: string;
  @ApiPropertyOptional({ description: 'authorization_code: the PKCE verifier (RFC 7636)' }) code_verifier?: string;
  @ApiPropertyOptional({ description: 'refresh_token: the refresh token' }) refresh_token?: string;
  @ApiPropertyOptional({ description: 'device_code grant: the device_code of device/authorize' }) device_code?: string;
  @ApiPropertyOptional({ description: 'client_credentials, refresh_token: space-separated scopes' }) scope?: string;
  @ApiPropertyOptional({ description: 'client_secret_post and public clients' }) client_id?: string;
  @ApiPropertyOptional({ description: 'client_secret_post' }) client_secret?: string;
}

class TokenResponseDto {
  @ApiProperty() access_token!: string;
  @ApiProperty({ example: 'Bearer' }) token_type!: string;
  @ApiProperty({ example: 3600 }) expires_in!: number;
  @ApiProperty({ example: 'openid profile email' }) scope!: string;
  @ApiPropertyOptional({ description: 'With the openid scope' }) id_token?: string;
  @ApiPropertyOptional({ description: 'With offline_access (rotated at each use)' }) refresh_token?: string;
}

/** The issuer's token endpoint (RFC 6749 3.2): OAuth's form body and error shape, not the service's. */
@ApiTags('openid-provider')
@Controller('oidc/:membershipId')
export class TokenEndpointController {
  constructor(private readonly endpoint: OidcTokenEndpoint) {}

  @BackChannelRoute({
    path: 'token',
    summary: 'Token endpoint (OAuth 2.0, OpenID Connect)',
    description:
      'Form-encoded. Client authentication: client_secret_basic, client_secret_post, or none for public clients. Errors are OAuth error objects (RFC 6749 5.2); a failed client authentication is 401 invalid_client.',
    form: TokenRequestForm,
    answer: { description: 'Tokens (Cache-Control: no-store)', type: TokenResponseDto },
    errors: 'An OAuth error (invalid_request, invalid_grant, unsupported_grant_type, ...)',
  })
  async token(
    @Param('membershipId', IssuerIdPipe) membershipId: string,
    @ClientRequest() request: BackChannelRequest,
    @Res({ passthrough: true }) response: Response,
  ): Promise<TokenEndpointResponse> {
    response.setHeader('Pragma', 'no-cache');
    return this.endpoint.exchange(membershipId, request);
  }
}
