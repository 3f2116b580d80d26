import { Controller, Get, Param } from '@nestjs/common';
import { ApiProperty, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/access-decorators';
import { type PublicJwk, SigningKeys } from './signing-keys';
import { ApiRoute } from '../common/api-route';
import { Issuers, type ProviderMetadata } from './issuer';

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

class ProviderMetadataDto {
  @ApiProperty({ example: 'http://localhost:3000/oidc/0f6e3a52-5a3c-4f4e-9a55-0c8f3d1f2b4e' }) issuer!: string;
  @ApiProperty() authorization_endpoint!: string;
  @ApiProperty() token_endpoint!: string;
  @ApiProperty() userinfo_endpoint!: string;
  @ApiProperty() jwks_uri!: string;
  @ApiProperty() end_session_endpoint!: string;
  @ApiProperty() introspection_endpoint!: string;
  @ApiProperty() revocation_endpoint!: string;
  @ApiProperty() device_authorization_endpoint!: string;
  @ApiProperty({ type: [String], example: ['code'] }) response_types_supported!: string[];
  @ApiProperty({ type: [String], example: ['query'] }) response_modes_supported!: string[];
  @ApiProperty({ type: [String] }) grant_types_supported!: string[];
  @ApiProperty({ type: [String], example: ['public'] }) subject_types_supported!: string[];
  @ApiProperty({ type: [String], example: ['ES256'] }) id_token_signing_alg_values_supported!: string[];
  @ApiProperty({ type: [String], example: ['S256'] }) code_challenge_methods_supported!: string[];
  @ApiProperty({ type: [String] }) token_endpoint_auth_methods_supported!: string[];
  @ApiProperty({ type: [String] }) introspection_endpoint_auth_methods_supported!: string[];
  @ApiProperty({ type: [String] }) revocation_endpoint_auth_methods_supported!: string[];
  @ApiProperty({ type: [String], example: ['openid', 'profile', 'email', 'offline_access'] }) scopes_supported!: string[];
  @ApiProperty({ type: [String] }) claims_supported!: string[];
  @ApiProperty({ type: [String], example: ['none', 'login', 'consent'] }) prompt_values_supported!: string[];
  @ApiProperty({ example: true }) authorization_response_iss_parameter_supported!: boolean;
  @ApiProperty({ example: false }) claims_parameter_supported!: boolean;
  @ApiProperty({ example: false }) request_parameter_supported!: boolean;
  @ApiProperty({ example: false }) request_uri_parameter_supported!: boolean;
}

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
