import { Controller, Get, Param } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/access-decorators';
import { ApiErrors } from '../common/openapi';
import { type PublicJwk, SigningKeys } from './signing-keys';

/** The routes under a membership's issuer, `/oidc/{m}` (contract "Single sign-on"). */
@ApiTags('openid-provider')
@Controller('oidc/:membershipId')
export class OidcIssuerController {
  constructor(private readonly keys: SigningKeys) {}

  @Get('jwks')
  @Public()
  @ApiOperation({
    summary: "The issuer's public keys (JWKS, RFC 7517)",
    description: 'The current ES256 key and the keys replaced within their overlap, newest first. Verify the membership\'s OpenID Provider tokens with these.',
  })
  @ApiResponse({ status: 200, description: 'The JWK Set' })
  @ApiErrors(404)
  jwks(@Param('membershipId') membershipId: string): Promise<{ keys: PublicJwk[] }> {
    return this.keys.jwks(membershipId);
  }
}
