import { ApiProperty } from '@nestjs/swagger';

/* What the issuer's public documents answer (OpenID Connect Discovery 1.0, RFC 7517), as the OpenAPI document describes them. */

export class PublicJwkDto {
  @ApiProperty({ example: 'EC' }) kty!: string;
  @ApiProperty({ example: 'P-256' }) crv!: string;
  @ApiProperty({ example: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU' }) x!: string;
  @ApiProperty({ example: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0' }) y!: string;
  @ApiProperty({ example: 'NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs', description: 'RFC 7638 thumbprint' }) kid!: string;
  @ApiProperty({ example: 'ES256' }) alg!: string;
  @ApiProperty({ example: 'sig' }) use!: string;
}

export class JwksDto {
  @ApiProperty({ type: [PublicJwkDto] }) keys!: PublicJwkDto[];
}

export class ProviderMetadataDto {
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
