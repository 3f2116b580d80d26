import type { Request } from 'express';
import type { ErrorBody } from './errors';

/**
 * The error codes of OAuth 2.0 (RFC 6749 5.2, RFC 6750 3.1, RFC 7009 2.2.1, RFC 8628 3.5, RFC 8707 2) that
 * the OpenID Provider's back-channel routes answer with.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'unsupported_token_type'
  | 'authorization_pending'
  | 'slow_down'
  | 'access_denied'
  | 'expired_token'
  | 'server_error'
  | 'temporarily_unavailable';

/** RFC 6750 3's WWW-Authenticate value of a protected resource's error; quotes and backslashes left out of the quoted description. */
function bearerChallenge(error: OAuthErrorCode, description: string): string {
  return `Bearer error="${error}", error_description="${description.replace(/["\\]/g, '')}"`;
}

/**
 * An error of an OpenID Provider back-channel route, answered in OAuth's shape
 * (`{"error", "error_description"}`, RFC 6749 5.2) instead of the service's error body.
 * `challenge` is the WWW-Authenticate header value of a 401.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description?: string,
    readonly status = 400,
    readonly challenge?: string,
  ) {
    super(description ?? error);
  }

  /** `invalid_client` (RFC 6749 5.2): 401 with a Basic challenge, whatever the client tried. */
  static invalidClient(description = 'Client authentication failed'): OAuthError {
    return new OAuthError('invalid_client', description, 401, 'Basic realm="portcullis"');
  }

  /**
   * A protected resource (userinfo) asked without any credentials: RFC 6750 3.1's bare challenge,
   * which names no error (the body still says `invalid_token`, for clients that read only it).
   */
  static tokenRequired(): OAuthError {
    return new OAuthError('invalid_token', 'A Bearer access token is required', 401, 'Bearer realm="portcullis"');
  }

  /** RFC 6750 3.1's `invalid_token` of a protected resource (userinfo). */
  static invalidToken(description = 'The access token is not valid'): OAuthError {
    return new OAuthError('invalid_token', description, 401, bearerChallenge('invalid_token', description));
  }

  /** RFC 6750 3.1's `invalid_request` of a protected resource (userinfo): a malformed request, 400 with its Bearer challenge. */
  static invalidRequest(description: string): OAuthError {
    return new OAuthError('invalid_request', description, 400, bearerChallenge('invalid_request', description));
  }

  /**
   * RFC 6750 3.1's `insufficient_scope` (403) of a protected resource: a valid token whose scopes
   * do not reach it (userinfo without `openid`).
   */
  static insufficientScope(description: string, scope: string): OAuthError {
    return new OAuthError('insufficient_scope', description, 403, `${bearerChallenge('insufficient_scope', description)}, scope="${scope}"`);
  }

  toBody(): { error: OAuthErrorCode; error_description?: string } {
    return this.description ? { error: this.error, error_description: this.description } : { error: this.error };
  }
}

/**
 * The OpenID Provider's back-channel routes (contract: "These routes use OAuth error bodies, not the
 * service's"): their failures before or outside the route's own code (a body the parser refused, a
 * 429, an unexpected error) are answered in OAuth's shape too. The pages (authorize, interaction)
 * answer HTML and are not here.
 */
const OAUTH_ROUTE = /^\/oidc\/[^/]+\/(?:token|introspect|revoke|userinfo|device\/authorize)\/?$/;

export function isOAuthRoute(request: Pick<Request, 'path'>): boolean {
  return OAUTH_ROUTE.test(request.path);
}

/** The service's error, as an OAuth route answers it: the status kept, the code OAuth's nearest. */
export function oauthErrorOf(status: number, body: ErrorBody): OAuthError {
  if (status >= 500) return new OAuthError(status === 503 ? 'temporarily_unavailable' : 'server_error', body.message, status);
  if (status === 401) return OAuthError.invalidClient(body.message);
  if (status === 429) return new OAuthError('slow_down', body.message, 429);
  return new OAuthError('invalid_request', body.message, status);
}
