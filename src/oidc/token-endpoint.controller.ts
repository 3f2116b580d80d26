import { Controller, Param, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { type BackChannelRequest, BackChannelRoute, ClientRequest } from './back-channel-route';
import { TokenRequestForm, TokenResponseDto } from './back-channel.dto';
import type { TokenEndpointResponse } from './grants';
import { IssuerIdPipe } from './issuer-id.pipe';
import { OidcTokenEndpoint } from './token-endpoint';

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
