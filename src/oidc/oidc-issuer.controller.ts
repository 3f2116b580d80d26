import { Controller, Get, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { Public } from '../common/access-decorators';
import { type PublicJwk, SigningKeys } from './signing-keys';
import { ApiRoute } from '../common/api-route';
import { Issuers, type ProviderMetadata } from './issuer';
import { JwksDto, ProviderMetadataDto } from './issuer.dto';

/** The routes under a membership's issuer, `/oidc/{m}` (contract "Single sign-on"). */
@ApiTags('openid-provider')
@Controller('oidc/:membershipId')
export class OidcIssuerController {
  constructor(
    private readonly keys: SigningKeys,
    private readonly issuers: Issuers,
  ) {}

  @Get('.well-known/openid-configuration')
  @Public()
  @ApiRoute({
    summary: "The issuer's OpenID Provider metadata (OpenID Connect Discovery 1.0)",
    description: 'What any certified OpenID Connect client library reads first: the endpoints, grants, scopes and algorithms of this membership as an OpenID Provider.',
    answers: [{ status: 200, description: 'The provider metadata', type: ProviderMetadataDto }],
    errors: [404],
  })
  async discovery(@Param('membershipId') membershipId: string): Promise<ProviderMetadata> {
    await this.keys.requireIssuer(membershipId);
    return this.issuers.metadata(membershipId);
  }

  @Get('jwks')
  @Public()
  @ApiRoute({
    summary: "The issuer's public keys (JWKS, RFC 7517)",
    description: 'The current ES256 key and the keys replaced within their overlap, newest first. Verify the membership\'s OpenID Provider tokens with these.',
    answers: [{ status: 200, description: 'The JWK Set', type: JwksDto }],
    errors: [404],
  })
  jwks(@Param('membershipId') membershipId: string): Promise<{ keys: PublicJwk[] }> {
    return this.keys.jwks(membershipId);
  }
}
