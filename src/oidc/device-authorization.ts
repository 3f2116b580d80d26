import { Injectable } from '@nestjs/common';
import type { OidcGrantType } from '../applications/application-oidc';
import { OAuthError } from '../common/oauth-error';
import { type DeviceAuthorization, TokenCodesService } from '../device-codes/token-codes.service';
import { OIDC_SCOPES } from './issuer';
import { formField } from './oauth-form';
import { clientMayUse, type ClientAuthRequest, OidcClients } from './oidc-clients';
import { parseScopeParameter } from './request-parameters';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code' satisfies OidcGrantType;

/**
 * `POST <issuer>/device/authorize` (RFC 8628 3.1): a device code and user code for a client that may
 * use the device grant. The codes are the specification's device codes (TokenCodesService), so the
 * membership's code policy, the approval routes and the `/device` page all apply unchanged.
 */
@Injectable()
export class OidcDeviceAuthorization {
  constructor(
    private readonly clients: OidcClients,
    private readonly codes: TokenCodesService,
  ) {}

  async authorize(membershipId: string, request: ClientAuthRequest & { clientAddress: string }): Promise<DeviceAuthorization> {
    // Public clients authenticate with `none` (their client_id), as at the token endpoint.
    const { client } = await this.clients.authenticate(membershipId, request);
    if (!clientMayUse(client, DEVICE_CODE_GRANT)) throw new OAuthError('unauthorized_client', 'The client may not use the device_code grant');
    const scopes = parseScopeParameter(formField(request.form, 'scope'), OIDC_SCOPES);
    // A refresh token continues a grant only for a client that has the refresh_token grant (as the token endpoint checks).
    if (scopes.includes('offline_access') && !clientMayUse(client, 'refresh_token')) {
      throw new OAuthError('invalid_scope', 'offline_access needs the refresh_token grant, which the client does not have');
    }
    return this.codes.createForClient(membershipId, client, scopes, request.clientAddress);
  }
}
