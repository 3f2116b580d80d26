import type { OidcClient } from './oidc-clients';

/** RFC 6749 5.1's successful token response (plus OpenID Connect's `id_token`). */
export interface TokenEndpointResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  id_token?: string;
  refresh_token?: string;
}

/** What every grant of the token endpoint gets: the authenticated client, the form, the caller's addresses. */
export interface GrantRequest {
  membershipId: string;
  client: OidcClient;
  /** The form's fields as parsed (a repeated field is an array: OAuth refuses it, `formField` says so). */
  form: Readonly<Record<string, unknown>>;
  /** The socket's address (TRUST_PROXY), for the sign-in defenses; and the User-Agent. */
  clientAddress: string;
  userAgent: string | undefined;
}

/**
 * One grant type of `<issuer>/token` (docs/oidc.md, "Tokens"). Each lives in its own file and is
 * listed in OidcTokenEndpoint; the endpoint has already authenticated the client and checked that
 * its `grant_types` allow `grantType`.
 */
export interface GrantHandler {
  readonly grantType: string;
  exchange(request: GrantRequest): Promise<TokenEndpointResponse>;
}
