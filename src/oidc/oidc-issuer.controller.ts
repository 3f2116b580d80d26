import { Controller, Get, Param } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/access-decorators';
import { type PublicJwk, SigningKeys } from './signing-keys';
import { ApiRoute } from '../common/api-route';

class PublicJwkDto {
  @ApiProperty({ example: 'EC' }) kty!: string;
  @ApiProperty({ example: 'P-256' }) crv!: string;
  @ApiProperty({ example: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU' }) x!: string;
  @ApiProperty({ example: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }) y!: string;
  @ApiProperty({ example: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs', description: 'RFC 7638 thumbprint' }) kid!: string;
  @ApiProperty({ example: 'ES256' }) alg!: string;
  @ApiProperty({ example: 'sig' }) use!: string;
}

class JwksDto {
  @ApiProperty({ type: [PublicJwkDto] }) keys!: PublicJwkDto[];
}

/** The routes under a membership's issuer, `/oidc/{m}` (contract "Single sign-on"). */
@ApiTags('openid-provider')
@Controller('oidc/:membershipId')
export class OidcIssuerController {
  constructor(private readonly keys: SigningKeys) {}

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
