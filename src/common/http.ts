import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { DomainError, type ErrorBody, type ErrorCode, RetryLaterError } from './errors';
import { mapError } from './error-mapping';
import { isPossibleId } from './ids';
import { hostileUrlProblem, unstorableBodyProblem } from './input-hygiene';
import { isOAuthRoute, OAuthError, oauthErrorOf } from './oauth-error';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export function requestIdOf(request: Request): string {
  return (request as Request & { id?: string }).id ?? '-';
}

/** The route label of a request not routed (yet): failures before routing, and unknown paths. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Where a request that failed before routing keeps the template of the route it addressed. */
const ADDRESSED_ROUTE = Symbol('portcullis.addressedRoute');

type RoutedRequest = Request & { [ADDRESSED_ROUTE]?: string };

/** Route template for logs and metric labels: never the raw URL, so no ids leak into labels. */
export function routeTemplateOf(request: Request): string {
  const route: unknown = (request as { route?: unknown }).route;
  const path: unknown = route && typeof route === 'object' ? (route as { path?: unknown }).path : undefined;
  if (typeof path === 'string') return `${request.baseUrl ?? ''}${path}`;
  return (request as RoutedRequest)[ADDRESSED_ROUTE] ?? UNMATCHED_ROUTE;
}

/** The part of an Express 5 router layer this reads (the `router` package's Layer). */
interface RouterLayer {
  route?: { path?: unknown; methods?: Record<string, boolean> };
  match?: (path: string) => unknown;
}

/**
 * For a request refused before routing (415, 413, a bad body): the template of the route its method
 * and path address, so that metrics and the request log count it there and not under `unmatched`.
 * Reads the app's own route table (the same templates a routed request gets); a path no route
 * serves stays `unmatched`. Only failures pay for the scan.
 */
function markAddressedRoute(request: Request): void {
  const stack = (request.app as { router?: { stack?: RouterLayer[] } } | undefined)?.router?.stack ?? [];
  const method = request.method.toLowerCase();
  for (const layer of stack) {
    const { route } = layer;
    if (!route || typeof route.path !== 'string' || typeof layer.match !== 'function') continue;
    if (!route.methods?.[method] && !route.methods?._all) continue;
    if (layer.match(request.path)) {
      (request as RoutedRequest)[ADDRESSED_ROUTE] = route.path;
      return;
    }
  }
}

/** Writes the contract's error body; unexpected errors are logged with the request id. */
export function sendError(request: Request, response: Response, error: unknown, logger: Logger): void {
  if (error instanceof OAuthError) return sendOAuthError(response, error);
  const { status, body, unexpected } = mapError(error);
  if (unexpected !== undefined) {
    logger.error(
      { err: unexpected, requestId: requestIdOf(request), method: request.method, route: routeTemplateOf(request) },
      'unhandled error',
    );
  }
  if (response.headersSent) {
    response.end();
    return;
  }
  if (error instanceof RetryLaterError) response.setHeader('Retry-After', String(error.retryAfterSeconds));
  if (isOAuthRoute(request)) return sendOAuthError(response, oauthErrorOf(status, body));
  if (status === 401) response.setHeader('WWW-Authenticate', wwwAuthenticate(error, body));
  if (error instanceof DomainError && error.challenge === 'insufficient_scope') {
    response.setHeader('WWW-Authenticate', `Bearer realm="portcullis", error="insufficient_scope", error_description="${challengeText(body.message)}"`);
  }
  response.status(status).json(body);
}

/** RFC 6749 5.2: the error object, never cached. */
function sendOAuthError(response: Response, error: OAuthError): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  if (error.challenge) response.setHeader('WWW-Authenticate', error.challenge);
  response.setHeader('Cache-Control', 'no-store');
  response.status(error.status).json(error.toBody());
}

/** 401 codes that say a presented token is bad: RFC 6750's `invalid_token`. */
const TOKEN_PROBLEMS: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'InvalidToken',
  'TokenWasExpired',
  'TokenWasRevoked',
  'TokenIsNotRefreshable',
  'RefreshTokenWasExpired',
  'RefreshTokenWasRevoked',
]);

/**
 * The challenge of a 401: `Basic realm` for Basic problems (RFC 7617), a bare `Bearer realm` when
 * no token was presented or the problem is not a token's (a wrong password at sign-in), and RFC
 * 6750's `invalid_token` with our message for a bad Bearer token.
 */
function wwwAuthenticate(error: unknown, body: ErrorBody): string {
  const challenge = error instanceof DomainError ? error.challenge : undefined;
  if (challenge === 'basic') return 'Basic realm="portcullis"';
  if (challenge === 'bearer' || !TOKEN_PROBLEMS.has(body.errorCode)) return 'Bearer realm="portcullis"';
  return `Bearer realm="portcullis", error="invalid_token", error_description="${challengeText(body.message)}"`;
}

/** RFC 6750 allows %x20-21 / %x23-5B / %x5D-7E in error_description: no quote, no backslash. */
function challengeText(message: string): string {
  return message.replace(/"/g, "'").replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, '');
}

/**
 * Gives a request its id, read back by `requestIdOf` (error logs, the request log line) and echoed
 * in X-Request-Id: a sane incoming X-Request-Id, or a new UUID. metrics' observeRequests calls it.
 */
export function assignRequestId(request: Request, response: Response): void {
  const incoming = request.headers['x-request-id'];
  const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
  (request as Request & { id?: string }).id = id;
  response.setHeader('X-Request-Id', id);
}

/** Paths whose answers may be cached: liveness, metrics and the API documents. */
const CACHEABLE_PATH = /^\/(ping|metrics|docs)(\/|$)|^\/openapi\//;

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * GET routes that change state, each with the methods it answers: the specification's GET
 * /refresh-token and /revoke-token, and the OpenID Provider's RP-initiated logout. Express answers
 * HEAD with a route's GET handler, but HEAD is safe (RFC 9110 9.2.1): a link checker or a
 * prefetcher sending it must not rotate a refresh token, revoke a session or sign anyone out.
 * Case-insensitive, with an optional trailing slash, as Express routes.
 */
const STATE_CHANGING_GETS: readonly [RegExp, string][] = [
  [/^\/(?:refresh-token|revoke-token)\/?$/i, 'GET, POST'],
  [/^\/oidc\/[^/]+\/logout\/?$/i, 'GET, POST'],
];

/** 405 with Allow for HEAD on a GET that changes state (STATE_CHANGING_GETS); undefined otherwise. */
function unsafeHeadProblem(request: Request, response: Response): DomainError | undefined {
  if (request.method !== 'HEAD') return undefined;
  const allowed = STATE_CHANGING_GETS.find(([path]) => path.test(request.path))?.[1];
  if (allowed === undefined) return undefined;
  response.setHeader('Allow', allowed);
  return new DomainError('MethodNotAllowed', `HEAD is not answered here: this address's GET changes state. Send ${allowed.replace(', ', ' or ')}`);
}
const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/;
const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\s*(;|$)/;

/** The OpenID Provider's routes: `/oidc/{m}/...` (docs/oidc.md). */
export function isOpenIdProviderPath(path: string): boolean {
  return path.startsWith('/oidc/');
}

/**
 * What a request's body is, from its headers: a body the route must not get (a 404 or 415 error),
 * 'json' or 'form' (the parser to run), 'none' (no body, or one on a method that takes none, which
 * no parser reads). A request that carries a body must say it is JSON; anything else is 415 before
 * any parsing. The OpenID Provider's routes (`/oidc/...`) take HTML forms and OAuth's form-encoded
 * bodies instead (RFC 6749 3.2), and JSON nowhere.
 */
function bodyOf(request: Request): DomainError | 'json' | 'form' | 'none' {
  const length = request.headers['content-length'];
  const hasBody = (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return 'none';
  const type = (request.headers['content-type'] ?? '').toLowerCase();
  const json = JSON_TYPE.test(type);
  if (!BODY_METHODS.has(request.method)) return json ? 'json' : 'none';
  if (isOpenIdProviderPath(request.path)) {
    if (FORM_TYPE.test(type)) return 'form';
    // A path with a segment no id can be (issuer, interaction) names nothing: 404 whatever the body
    // (contract "Hostile input": a hostile path id answers 400 or 404).
    if (request.path.split('/').slice(2).some((segment) => segment !== '' && !isPossibleId(segment))) {
      return new DomainError('NotFound', 'Nothing is at this address');
    }
    return new DomainError('UnsupportedMediaType', 'The request body must be form-encoded (Content-Type: application/x-www-form-urlencoded)');
  }
  if (json) return 'json';
  return new DomainError('UnsupportedMediaType', 'The request body must be JSON (Content-Type: application/json)');
}

/** The body parsers screenRequests runs: express.json, and express.urlencoded for the OpenID Provider's forms. */
export interface BodyParsers {
  json: RequestHandler;
  form: RequestHandler;
}

/**
 * Every request's checks before routing, in one middleware, in this order:
 *  - `Cache-Control: no-store` on every answer but the cacheable paths, set before anything can
 *    fail so errors carry it too (RFC 6749 section 5.1 for token answers; secrets and user data as well);
 *  - the URL's text (hostileUrlProblem), and Host;
 *  - HEAD on a GET that changes state (unsafeHeadProblem);
 *  - the body's type (bodyOf), then its parser, then the parsed body's text (unstorableBodyProblem).
 * One middleware rather than one per step: each Express layer costs every request its dispatch, and
 * a request without a body (every read route) is done after three checks on its headers and URL.
 */
export function screenRequests(parsers: BodyParsers) {
  return (request: Request, response: Response, next: NextFunction): void => {
    if (!CACHEABLE_PATH.test(request.path)) response.setHeader('Cache-Control', 'no-store');
    const urlProblem = hostileUrlProblem(request);
    if (urlProblem) return next(urlProblem);
    // RFC 9112 3.2: a server must answer 400 to an HTTP/1.1 request without Host.
    if (request.headers.host === undefined && request.httpVersion === '1.1') {
      return next(new DomainError('MalformedRequest', 'An HTTP/1.1 request must carry a Host header'));
    }
    const headProblem = unsafeHeadProblem(request, response);
    if (headProblem) return next(headProblem);
    const body = bodyOf(request);
    if (body === 'none') return next();
    if (body instanceof DomainError) return next(body);
    if (body === 'form') {
      parsers.form(request, response, next);
      return;
    }
    parsers.json(request, response, (error?: unknown) => next(error ?? unstorableBodyProblem(request)));
  };
}

/** Express error middleware for failures before Nest routing (body parsing, content type). */
export function expressErrorHandler(logger: Logger) {
  return (error: unknown, request: Request, response: Response, _next: NextFunction): void => {
    markAddressedRoute(request);
    sendError(request, response, error, logger);
  };
}
