import type { OidcGrantType } from '../applications/application-oidc';
import type { ApplicationRow } from '../database/schema';
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
 * One grant type of `<issuer>/token` (docs/oidc.md, "Tokens"). Each lives in its own file and
 * registers itself with OidcTokenEndpoint; the endpoint has authenticated the client and checked
 * that its `grant_types` allow `grantType` before `exchange` runs.
 */
export interface GrantHandler<Rows = never> {
  readonly grantType: OidcGrantType;
  /**
   * Reads the claimed client's application together with the rows the exchange needs: one round
   * trip instead of two (the code exchange). Without it, the endpoint reads the application alone.
   * Nothing it reads is answered before the client has authenticated with that application row.
   */
  readWithClient?(membershipId: string, clientId: string, form: Readonly<Record<string, unknown>>): Promise<ReadWithClient<Rows>>;
  /** `rows`: what `readWithClient` read, when the handler has it. */
  exchange(request: GrantRequest, rows?: Rows): Promise<TokenEndpointResponse>;
}

/** The client's application (undefined: no such row) and a grant's own rows, read in one statement. */
export interface ReadWithClient<Rows> {
  application: ApplicationRow | undefined;
  rows: Rows;
}
