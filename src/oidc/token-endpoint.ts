import { Injectable } from '@nestjs/common';
import { OIDC_GRANT_TYPES, type OidcGrantType } from '../applications/application-oidc';
import { OAuthError } from '../common/oauth-error';
import { isPossibleId } from '../common/ids';
import { type ClaimedClient, clientMayUse, type ClientAuthRequest, OidcClients } from './oidc-clients';
import type { GrantHandler, TokenEndpointResponse } from './grants';
import { requiredFormField } from './oauth-form';

const isGrantType = (value: string): value is OidcGrantType => (OIDC_GRANT_TYPES as readonly string[]).includes(value);

/** What the endpoint runs for one grant type: the client's authentication, then the grant. */
type GrantRun = (membershipId: string, claimed: ClaimedClient, request: TokenRequest) => Promise<TokenEndpointResponse>;

type TokenRequest = ClientAuthRequest & { clientAddress: string; userAgent: string | undefined };

/**
 * `POST <issuer>/token` (RFC 6749 3.2): authenticates the client, checks that it may use the
 * grant, and hands the form to that grant's handler. Handlers register themselves at start.
 */
@Injectable()
export class OidcTokenEndpoint {
  private readonly grants = new Map<string, GrantRun>();

  constructor(private readonly clients: OidcClients) {}

  /** Registers a grant handler (each handler's module calls this once, at start). */
  register<Rows>(handler: GrantHandler<Rows>): void {
    this.grants.set(handler.grantType, async (membershipId, claimed, request) => {
      const read = handler.readWithClient && isPossibleId(claimed.id) ? await handler.readWithClient(membershipId, claimed.id, request.form) : undefined;
      const { client } = this.clients.check(membershipId, claimed, read ? read.application : await this.clients.application(claimed.id));
      if (!clientMayUse(client, handler.grantType)) {
        throw new OAuthError('unauthorized_client', `The client may not use the ${handler.grantType} grant`);
      }
      const grantRequest = { membershipId, client, form: request.form, clientAddress: request.clientAddress, userAgent: request.userAgent };
      return read ? handler.exchange(grantRequest, read.rows) : handler.exchange(grantRequest);
    });
  }

  async exchange(membershipId: string, request: TokenRequest): Promise<TokenEndpointResponse> {
    const grantType = requiredFormField(request.form, 'grant_type');
    const claimed = this.clients.claim(membershipId, request);
    const grant = isGrantType(grantType) ? this.grants.get(grantType) : undefined;
    if (grant) return grant(membershipId, claimed, request);
    // The client first: whoever cannot authenticate learns nothing about the grants.
    this.clients.check(membershipId, claimed, await this.clients.application(claimed.id));
    throw new OAuthError('unsupported_grant_type', `grant_type ${grantType} is not supported`);
  }
}
