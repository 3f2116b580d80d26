import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DomainError, type ErrorCode } from '../common/errors';
import { OAuthError, type OAuthErrorCode } from '../common/oauth-error';
import { TokenCodesService } from '../device-codes/token-codes.service';
import { DEVICE_CODE_GRANT } from './device-authorization';
import type { GrantHandler, GrantRequest, TokenEndpointResponse } from './grants';
import { requiredFormField } from './oauth-form';
import { OidcTokens } from './oidc-tokens';
import { OidcTokenEndpoint } from './token-endpoint';

/** The device codes' poll answers, as RFC 8628 3.5 names them at the token endpoint. */
const RFC_8628_ERRORS: Partial<Record<ErrorCode, OAuthErrorCode>> = {
  InvalidDeviceCode: 'invalid_grant',
  ExpiredToken: 'expired_token',
  SlowDown: 'slow_down',
  AuthorizationPending: 'authorization_pending',
  AuthorizationDenied: 'access_denied',
};

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 3.4): the client's poll with
 * the device code of `<issuer>/device/authorize`. TokenCodesService checks the code in the order of
 * the specification's poll (another client's code, or a code of the specification's routes, is
 * `invalid_grant`); an approved code becomes an OpenID Connect grant of the approver: a new session
 * of its own (as the specification's device pair is), an ID token with `openid`, a refresh token with
 * `offline_access`.
 */
@Injectable()
export class DeviceCodeGrant implements GrantHandler, OnModuleInit {
  readonly grantType = DEVICE_CODE_GRANT;

  constructor(
    private readonly endpoint: OidcTokenEndpoint,
    private readonly codes: TokenCodesService,
    private readonly tokens: OidcTokens,
  ) {}

  onModuleInit(): void {
    this.endpoint.register(this);
  }

  async exchange({ membershipId, client, form, clientAddress, userAgent }: GrantRequest): Promise<TokenEndpointResponse> {
    const deviceCode = requiredFormField(form, 'device_code');
    try {
      return await this.codes.pollForClient(membershipId, client.id, deviceCode, async (approved) => {
        const issued = await this.tokens.issueForUser({
          membershipId,
          client,
          user: approved.approver,
          session: 'new',
          scopes: approved.scopes,
          authTime: approved.decidedAt,
          amr: approved.amr,
          grant: DEVICE_CODE_GRANT,
          usesUp: { kind: 'device_code', codeId: approved.codeId },
          metadata: { ipAddress: clientAddress, userAgent },
        });
        return issued?.response;
      });
    } catch (error) {
      const code = error instanceof DomainError ? RFC_8628_ERRORS[error.code] : undefined;
      if (code) throw new OAuthError(code, error instanceof Error ? error.message : undefined);
      throw error;
    }
  }
}
