import { Injectable } from '@nestjs/common';
import { OIDC_GRANT_TYPES, type OidcGrantType } from '../applications/application-oidc';
import { OAuthError } from '../common/oauth-error';
import { clientMayUse, type ClientAuthRequest, OidcClients } from './oidc-clients';
import type { GrantHandler, TokenEndpointResponse } from './grants';
import { requiredFormField } from './oauth-form';

const isGrantType = (value: string): value is OidcGrantType => (OIDC_GRANT_TYPES as readonly string[]).includes(value);

/**
 * `POST <issuer>/token` (RFC 6749 3.2): authenticates the client, checks that it may use the
 * grant, and hands the form to that grant's handler. Handlers are added to the list in the
 * constructor as they are built.
 */
@Injectable()
export class OidcTokenEndpoint {
  private readonly handlers = new Map<string, GrantHandler>();

  constructor(private readonly clients: OidcClients) {}

  /** Registers a grant handler (each handler's module calls this once, at start). */
  register(handler: GrantHandler): void {
    this.handlers.set(handler.grantType, handler);
  }

  async exchange(
    membershipId: string,
    request: ClientAuthRequest & { clientAddress: string; userAgent: string | undefined },
  ): Promise<TokenEndpointResponse> {
    const grantType = requiredFormField(request.form, 'grant_type');
    // The client first: whoever cannot authenticate learns nothing about the grants.
    const { client } = await this.clients.authenticate(membershipId, request);
    const handler = this.handlers.get(grantType);
    if (!handler || !isGrantType(grantType)) throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported`);
    if (!clientMayUse(client, grantType)) throw new OAuthError('unauthorized_client', `The client may not use the ${grantType} grant`);
    return handler.exchange({ membershipId, client, form: request.form, clientAddress: request.clientAddress, userAgent: request.userAgent });
  }
}
