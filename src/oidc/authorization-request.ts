import { OIDC_SCOPES } from './issuer';
import type { OidcClient } from './oidc-clients';
import { spaceDelimited } from './request-parameters';

/** RFC 6749 4.1.2.1 and OpenID Connect Core 3.1.2.6 errors, sent back to the client's redirect_uri. */
export type AuthorizationErrorCode =
  | 'invalid_request'
  | 'unauthorized_client'
  | 'access_denied'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'server_error'
  | 'login_required'
  | 'consent_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'invalid_target';

/** A refusal answered by redirect (the client and its redirect_uri were good). */
export class AuthorizationError extends Error {
  constructor(
    readonly error: AuthorizationErrorCode,
    readonly description: string,
  ) {
    super(description);
  }
}

/** A refusal that must NOT redirect: the client or the redirect_uri cannot be trusted (a 400 page). */
export class UntrustedAuthorizationRequest extends Error {}

/** `prompt` values this provider acts on (`select_account` is accepted and means nothing here: one account per browser). */
export type Prompt = 'none' | 'login' | 'consent';

/** A checked authorization request (docs/oidc.md, "Authorization"). */
export interface AuthorizationRequest {
  client: OidcClient;
  redirectUri: string;
  state?: string;
  nonce?: string;
  scopes: string[];
  codeChallenge: string;
  prompts: Prompt[];
  maxAge?: number;
  resource?: string;
  /** `id_token_hint` as sent (OpenID Connect Core 3.1.2.1); the endpoint checks it against the issuer's keys. */
  idTokenHint?: string;
}

/** RFC 7636 4.2: base64url of a SHA-256 is 43 characters; a challenge is 43 to 128 unreserved ones. */
const CODE_CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;
const MAX_PARAMETER_LENGTH = 2048;

/**
 * One query parameter: absent, or one string. A repeated or over-long one cannot be honoured
 * (RFC 6749 3.1: parameters MUST NOT be included more than once).
 */
function single(query: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new AuthorizationError('invalid_request', `${name} must be given once`);
  if (value.length > MAX_PARAMETER_LENGTH) throw new AuthorizationError('invalid_request', `${name} must be at most ${MAX_PARAMETER_LENGTH} characters`);
  return value;
}

/** The `state` an error redirect may carry back: the request's, when it is one string within the limit (else nothing is echoed). */
export function echoableState(query: Readonly<Record<string, unknown>>): string | undefined {
  const state = query.state;
  return typeof state === 'string' && state !== '' && state.length <= MAX_PARAMETER_LENGTH ? state : undefined;
}

/** `client_id` and `redirect_uri`, checked before anything else: without both, nothing may redirect. */
export function trustedRedirect(query: Readonly<Record<string, unknown>>): { clientId: string; redirectUri: string } {
  const clientId = query.client_id;
  const redirectUri = query.redirect_uri;
  if (typeof clientId !== 'string' || !clientId) throw new UntrustedAuthorizationRequest('The request names no client (client_id).');
  if (typeof redirectUri !== 'string' || !redirectUri) throw new UntrustedAuthorizationRequest('The request names no redirect_uri.');
  return { clientId, redirectUri };
}

/** Whether `redirectUri` is one the client registered, compared exactly (contract: "matched exactly"). */
export function isRegisteredRedirect(client: OidcClient, redirectUri: string): boolean {
  return client.oidc.redirect_uris.includes(redirectUri);
}

/**
 * The rest of the request, once client and redirect_uri are known good: every refusal here is an
 * AuthorizationError the endpoint sends back to the redirect_uri.
 */
export function parseAuthorizationRequest(query: Readonly<Record<string, unknown>>, client: OidcClient, redirectUri: string): AuthorizationRequest {
  const state = single(query, 'state');
  if (query.request !== undefined) throw new AuthorizationError('request_not_supported', 'Request objects are not supported');
  if (query.request_uri !== undefined) throw new AuthorizationError('request_uri_not_supported', 'request_uri is not supported');
  const responseType = single(query, 'response_type');
  if (!responseType) throw new AuthorizationError('invalid_request', 'response_type is required');
  if (responseType !== 'code') throw new AuthorizationError('unsupported_response_type', 'Only response_type=code is supported');
  // Discovery lists only `query`: a client asking for a fragment or a form post would otherwise
  // look for the code where it is not.
  const responseMode = single(query, 'response_mode');
  if (responseMode !== undefined && responseMode !== 'query') throw new AuthorizationError('invalid_request', 'Only response_mode=query is supported');
  if (!client.oidc.grant_types.includes('authorization_code')) {
    throw new AuthorizationError('unauthorized_client', 'The client may not use the authorization code grant');
  }
  const codeChallenge = single(query, 'code_challenge');
  if (!codeChallenge) throw new AuthorizationError('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256');
  if (single(query, 'code_challenge_method') !== 'S256') throw new AuthorizationError('invalid_request', 'code_challenge_method must be S256');
  if (!CODE_CHALLENGE.test(codeChallenge)) throw new AuthorizationError('invalid_request', 'code_challenge is not a valid S256 challenge');

  const requested = spaceDelimited(single(query, 'scope'));
  const unknown = requested.find((scope) => !(OIDC_SCOPES as readonly string[]).includes(scope));
  if (unknown) throw new AuthorizationError('invalid_scope', `Unknown scope: ${unknown}`);
  if (!requested.includes('openid')) throw new AuthorizationError('invalid_scope', 'The openid scope is required');
  // offline_access asks for a refresh token: meaningless for a client that may not refresh, so not granted.
  const scopes = [...new Set(requested)].filter((scope) => scope !== 'offline_access' || client.oidc.grant_types.includes('refresh_token'));

  const prompts = parsePrompts(single(query, 'prompt'));
  const maxAgeText = single(query, 'max_age');
  if (maxAgeText !== undefined && !/^\d{1,9}$/.test(maxAgeText)) throw new AuthorizationError('invalid_request', 'max_age must be a number of seconds');
  const resource = single(query, 'resource');
  if (resource !== undefined && !isResourceIndicator(resource)) {
    throw new AuthorizationError('invalid_target', 'resource must be an absolute URI without a fragment');
  }
  return {
    client,
    redirectUri,
    state,
    nonce: single(query, 'nonce'),
    scopes,
    codeChallenge,
    prompts,
    maxAge: maxAgeText === undefined ? undefined : Number(maxAgeText),
    resource,
    idTokenHint: single(query, 'id_token_hint'),
  };
}

function parsePrompts(value: string | undefined): Prompt[] {
  const prompts = spaceDelimited(value);
  const acted: Prompt[] = [];
  for (const prompt of prompts) {
    if (prompt === 'select_account') continue;
    if (prompt !== 'none' && prompt !== 'login' && prompt !== 'consent') throw new AuthorizationError('invalid_request', `Unknown prompt value: ${prompt}`);
    acted.push(prompt);
  }
  // OpenID Connect Core 3.1.2.1: none with any other value is an error.
  if (acted.includes('none') && prompts.length > 1) throw new AuthorizationError('invalid_request', 'prompt=none cannot be combined with other values');
  return acted;
}

/** RFC 8707 2: an absolute URI, no fragment. */
function isResourceIndicator(value: string): boolean {
  try {
    const url = new URL(value);
    return !url.hash && !value.includes('#') && /^[a-z][a-z0-9+.-]*:/i.test(value);
  } catch {
    return false;
  }
}

/** The redirect that carries an authorization response or error, with `state` and `iss` (RFC 9207). */
export function authorizationResponseUrl(redirectUri: string, issuer: string, state: string | undefined, parameters: Record<string, string>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) url.searchParams.set(name, value);
  if (state !== undefined) url.searchParams.set('state', state);
  url.searchParams.set('iss', issuer);
  return url.toString();
}
