/**
 * Error bodies and deny outcomes of the client library. The body shape is the service's own
 * (`{statusCode, errorCode, message}`), so a protected API answers like the service does.
 */

/** Statuses the library answers with when it denies a request. */
export type DenyStatus = 401 | 403 | 503;

/** The error body a protected API sends; the same shape as the service's error body. */
export interface PortcullisErrorBody {
  statusCode: number;
  errorCode: string;
  message: string;
}

/** Thrown at construction or decoration time for settings or rules that can never work. */
export class PortcullisConfigError extends Error {
  override readonly name = 'PortcullisConfigError';
}

/** Realm announced in the `WWW-Authenticate` header of every 401 the library answers. */
export const PORTCULLIS_REALM = 'portcullis';

/** A refused request: the status, the exact body and the headers to answer with. */
export interface AuthorizationDenied {
  allowed: false;
  status: DenyStatus;
  body: PortcullisErrorBody;
  /** Response headers to set (a 401 carries `WWW-Authenticate`). */
  headers: Readonly<Record<string, string>>;
  /** Operator-facing detail (never sent to the caller): why the service was unusable, etc. */
  detail?: string;
  /**
   * On a 403 for a missing permission: the expression the service was asked and refused
   * (`<caller id>.orders.read.o-1`). Grant `orders.read` (or a narrower form) to the caller's
   * role to let it through. In development (NODE_ENV=development) the 403's message names it too.
   */
  required?: string;
}

/** A protected API in development: denials explain themselves to the developer. */
export function inDevelopment(): boolean {
  return process.env['NODE_ENV'] === 'development';
}

export type ChallengeScheme = 'Bearer' | 'Basic';

/**
 * `WWW-Authenticate` value for a 401. A Bearer (or absent) credential gets a Bearer challenge
 * (with `error="invalid_token"` when a token was presented, RFC 6750); a Basic credential gets a
 * Basic challenge. No Basic challenge is offered by default, so browsers do not pop up a
 * password dialog on an API.
 */
export function challenge(scheme: ChallengeScheme, tokenPresented: boolean): string {
  if (scheme === 'Basic') return `Basic realm="${PORTCULLIS_REALM}"`;
  return tokenPresented
    ? `Bearer realm="${PORTCULLIS_REALM}", error="invalid_token"`
    : `Bearer realm="${PORTCULLIS_REALM}"`;
}

export function unauthorized(
  body: { errorCode: string; message: string },
  scheme: ChallengeScheme,
  tokenPresented: boolean,
  detail?: string,
): AuthorizationDenied {
  return {
    allowed: false,
    status: 401,
    body: { statusCode: 401, errorCode: body.errorCode, message: body.message },
    headers: { 'WWW-Authenticate': challenge(scheme, tokenPresented) },
    ...(detail === undefined ? {} : { detail }),
  };
}

export function accessDenied(message: string, detail?: string): AuthorizationDenied {
  return {
    allowed: false,
    status: 403,
    body: { statusCode: 403, errorCode: 'AccessDenied', message },
    headers: {},
    ...(detail === undefined ? {} : { detail }),
  };
}

export const UNAVAILABLE_MESSAGE =
  'The authentication service is unavailable; try again later.';

export function serviceUnavailable(detail: string): AuthorizationDenied {
  return {
    allowed: false,
    status: 503,
    body: {
      statusCode: 503,
      errorCode: 'AuthenticationServiceUnavailable',
      message: UNAVAILABLE_MESSAGE,
    },
    // Clients should retry, not sign the user out.
    headers: { 'Retry-After': '1' },
    detail,
  };
}
