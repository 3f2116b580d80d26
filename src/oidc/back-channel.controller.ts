import { Controller, Param } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { type BackChannelRequest, BackChannelRoute, ClientRequest } from './back-channel-route';
import type { DeviceAuthorization } from '../device-codes/token-codes.service';
import { DeviceAuthorizationDto, DeviceAuthorizationForm, IntrospectionDto, RevocationDto, TokenForm } from './back-channel.dto';
import { OidcDeviceAuthorization } from './device-authorization';
import { type IntrospectionResponse, TokenIntrospection } from './token-introspection';

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
    errors: 'invalid_request, invalid_scope, unauthorized_client; 429 slow_down past DEVICE_CODE_ADDRESS_MAX codes from one client address within 15 minutes (Retry-After)',
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
