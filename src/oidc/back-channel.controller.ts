import { Controller, Param } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { type BackChannelRequest, BackChannelRoute, ClientRequest } from './back-channel-route';
import type { DeviceAuthorization } from '../device-codes/token-codes.service';
import { OidcDeviceAuthorization } from './device-authorization';
import { type IntrospectionResponse, TokenIntrospection } from './token-introspection';

class ClientAuthenticationFields {
  @ApiPropertyOptional({ description: 'client_secret_post, and public clients (authentication none)' }) client_id?: string;
  @ApiPropertyOptional({ description: 'client_secret_post' }) client_secret?: string;
}

class DeviceAuthorizationForm extends ClientAuthenticationFields {
  @ApiPropertyOptional({ example: 'openid profile offline_access', description: 'Space-separated, among scopes_supported' }) scope?: string;
}

class DeviceAuthorizationDto {
  @ApiProperty({ description: 'Shown once; poll the token endpoint with it' }) device_code!: string;
  @ApiProperty({ example: 'WDJB3MJH', description: "The membership's code policy" }) user_code!: string;
  @ApiProperty({ example: 'http://localhost:3000/device?membership_id=0f6e3a52-5a3c-4f4e-9a55-0c8f3d1f2b4e' }) verification_uri!: string;
  @ApiProperty() verification_uri_complete!: string;
  @ApiProperty({ example: 600 }) expires_in!: number;
  @ApiProperty({ example: 5 }) interval!: number;
}

class TokenForm extends ClientAuthenticationFields {
  @ApiProperty({ description: 'The access or refresh token' }) token!: string;
  @ApiPropertyOptional({ enum: ['access_token', 'refresh_token'], description: 'Which kind to look for first; other values are ignored' }) token_type_hint?: string;
}

class IntrospectionDto {
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
class RevocationDto {}

/**
 * The issuer's back-channel routes besides the token endpoint: RFC 8628 device authorization,
 * RFC 7662 introspection, RFC 7009 revocation. Form bodies, client authentication as at the token
 * endpoint, OAuth's error objects (a failed client authentication is 401 invalid_client).
 */
@ApiTags('openid-provider')
@Controller('oidc/:membershipId')
export class BackChannelController {
  constructor(
    private readonly devices: OidcDeviceAuthorization,
    private readonly introspection: TokenIntrospection,
  ) {}

  @BackChannelRoute({
    path: 'device/authorize',
    summary: 'Device authorization endpoint (RFC 8628 3.1)',
    description:
      "Form-encoded. For clients whose grant_types hold urn:ietf:params:oauth:grant-type:device_code (public clients too, with their client_id). The codes are the membership's device codes: its code policy, the /device page and the approve/deny routes apply. Poll the token endpoint with grant_type=urn:ietf:params:oauth:grant-type:device_code.",
    form: DeviceAuthorizationForm,
    answer: { description: 'The codes (RFC 8628 3.2)', type: DeviceAuthorizationDto },
    errors: 'invalid_request, invalid_scope, unauthorized_client',
  })
  deviceAuthorization(@Param('membershipId') membershipId: string, @ClientRequest() request: BackChannelRequest): Promise<DeviceAuthorization> {
    return this.devices.authorize(membershipId, request);
  }

  @BackChannelRoute({
    path: 'introspect',
    summary: 'Token introspection (RFC 7662)',
    description:
      "Form-encoded, client authentication required. {active: false} for unknown, expired, revoked or another membership's tokens. A confidential client may introspect any access token of the issuer (a resource server); refresh tokens, and for a public client every token, only its own.",
    form: TokenForm,
    answer: { description: 'The token state (Cache-Control: no-store)', type: IntrospectionDto },
    errors: 'invalid_request (no token)',
  })
  introspect(@Param('membershipId') membershipId: string, @ClientRequest() request: BackChannelRequest): Promise<IntrospectionResponse> {
    return this.introspection.introspect(membershipId, request);
  }

  @BackChannelRoute({
    path: 'revoke',
    summary: 'Token revocation (RFC 7009)',
    description:
      "Form-encoded, client authentication required. 200 whatever the token; a token of the calling client ends its grant (an access or refresh token of a user's grant: every token of that grant; a client_credentials token: itself). Another client's token is left alone.",
    form: TokenForm,
    answer: { description: 'Done, or nothing to do: an empty object either way', type: RevocationDto },
    errors: 'invalid_request (no token)',
  })
  async revoke(@Param('membershipId') membershipId: string, @ClientRequest() request: BackChannelRequest): Promise<Record<string, never>> {
    await this.introspection.revoke(membershipId, request);
    return {};
  }
}
