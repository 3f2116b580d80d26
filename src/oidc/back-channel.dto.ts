import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/*
 * The form bodies and answers of the issuer's back-channel endpoints: token (RFC 6749), device
 * authorization (RFC 8628), introspection (RFC 7662) and revocation (RFC 7009). Only the OpenAPI
 * document reads these; the endpoints read their forms through `back-channel-route.ts`.
 */

export class ClientAuthenticationFields {
  @ApiPropertyOptional({ description: 'client_secret_post, and public clients (authentication none)' }) client_id?: string;
  @ApiPropertyOptional({ description: 'client_secret_post' }) client_secret?: string;
}

export class DeviceAuthorizationForm extends ClientAuthenticationFields {
  @ApiPropertyOptional({ example: 'openid profile offline_access', description: 'Space-separated, among scopes_supported' }) scope?: string;
}

export class DeviceAuthorizationDto {
  @ApiProperty({ description: 'Shown once; poll the token endpoint with it' }) device_code!: string;
  @ApiProperty({ example: 'WDJB3MJH', description: "The membership's code policy" }) user_code!: string;
  @ApiProperty({ example: 'http://localhost:3000/device?membership_id=0f6e3a52-5a3c-4f4e-9a55-0c8f3d1f2b4e' }) verification_uri!: string;
  @ApiProperty() verification_uri_complete!: string;
  @ApiProperty({ example: 600 }) expires_in!: number;
  @ApiProperty({ example: 5 }) interval!: number;
}

export class TokenForm extends ClientAuthenticationFields {
  @ApiProperty({ description: 'The access or refresh token' }) token!: string;
  @ApiPropertyOptional({ enum: ['access_token', 'refresh_token'], description: 'Which kind to look for first; other values are ignored' }) token_type_hint?: string;
}

export class IntrospectionDto {
  @ApiProperty() active!: boolean;
  @ApiPropertyOptional({ description: 'The user, or the client itself for client_credentials' }) sub?: string;
  @ApiPropertyOptional() client_id?: string;
  @ApiPropertyOptional({ example: 'openid profile' }) scope?: string;
  @ApiPropertyOptional() exp?: number;
  @ApiPropertyOptional() iat?: number;
  @ApiPropertyOptional() iss?: string;
  @ApiPropertyOptional({ description: 'Access tokens: the client id or the RFC 8707 resource' }) aud?: string;
  @ApiPropertyOptional() jti?: string;
  @ApiPropertyOptional({ example: 'Bearer' }) token_type?: string;
}

/** RFC 7009 2.2: the body of a revocation answer carries nothing (clients ignore it). */
export class RevocationDto {}

export class TokenRequestForm {
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

export class TokenResponseDto {
  @ApiProperty() access_token!: string;
  @ApiProperty({ example: 'Bearer' }) token_type!: string;
  @ApiProperty({ example: 3600 }) expires_in!: number;
  @ApiProperty({ example: 'openid profile email' }) scope!: string;
  @ApiPropertyOptional({ description: 'With the openid scope' }) id_token?: string;
  @ApiPropertyOptional({ description: 'With offline_access (rotated at each use)' }) refresh_token?: string;
}
