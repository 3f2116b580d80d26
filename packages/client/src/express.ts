/**
 * Express adapter: middleware factories with the same behaviour as the Nest guard.
 *
 * Use them as ROUTE-LEVEL middleware (`app.get('/orders/:id', guard.authorized(), handler)`):
 * only there has Express matched the route, so `req.route.path` (the default resource) and
 * `req.params` (route placeholders) are known. Mounted with `app.use(...)` before routing, pass
 * the template as `route` (resource) and expect route placeholders to stay as written.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AuthorizationOutcome, EndpointRule, PortcullisClient } from './client';
import { type AuthorizationDenied, inDevelopment } from './errors';
import { compilePermission, type PermissionTemplate } from './expression';
import { attachPrincipal, toProtectedRequest } from './request';

/** Permission segments of an endpoint, plus its route template when Express cannot tell it. */
export interface ExpressAuthorizedRule extends PermissionTemplate {
  /** Route template (`/orders/:orderId`); default `req.route.path`. */
  route?: string;
}

export interface PortcullisMiddlewareOptions {
  /**
   * Called for each refused request before the answer is written, e.g. to log
   * `denied.detail` (operator-facing: why the service was unusable) for 503s, or
   * `denied.required` (the permission expression a 403 needed). Without it, in development
   * (NODE_ENV=development), each 403 for a missing permission is written to the console with the
   * expression that was needed.
   */
  onDenied?: (denied: AuthorizationDenied, req: Request) => void;
}

export interface PortcullisMiddleware {
  /** Token and permission required. */
  authorized(rule?: ExpressAuthorizedRule): RequestHandler;
  /** Token required; the handler checks permissions itself (`req.portcullis` holds the caller). */
  selfAuthorized(): RequestHandler;
  /** Public endpoint. */
  unauthorized(): RequestHandler;
}

/**
 * `portcullis(client)`: the middleware factories bound to a client. Rules are checked when the
 * middleware is created (a bad permission throws PortcullisConfigError at start-up).
 */
export function portcullis(
  client: PortcullisClient,
  options: PortcullisMiddlewareOptions = {},
): PortcullisMiddleware {
  const answer = (outcome: AuthorizationOutcome, req: Request, res: Response, next: NextFunction): void => {
    if (outcome.allowed) {
      attachPrincipal(req, outcome.principal);
      next();
      return;
    }
    if (options.onDenied) options.onDenied(outcome, req);
    else if (outcome.required !== undefined && inDevelopment()) {
      console.warn(`[portcullis] 403 ${req.method} ${req.originalUrl}: the caller needs ${outcome.required}`);
    }
    // The exact error body, as the service would answer.
    res.status(outcome.status).set(outcome.headers).json(outcome.body);
  };
  const middleware = (rule: EndpointRule, route?: string): RequestHandler => (req, res, next) => {
    const decided = client.decide(toProtectedRequest(req, route), rule);
    // A decision the cache gave at once goes on at once (next() in this turn, no promise).
    if (decided instanceof Promise) decided.then((outcome) => answer(outcome, req, res, next)).catch(next);
    else answer(decided, req, res, next);
  };
  return {
    authorized(rule: ExpressAuthorizedRule = {}): RequestHandler {
      const { route, ...permission } = rule;
      return middleware({ mode: 'authorized', permission: compilePermission(permission) }, route);
    },
    selfAuthorized(): RequestHandler {
      return middleware({ mode: 'self-authorized' });
    },
    unauthorized(): RequestHandler {
      return (_req, _res, next) => next();
    },
  };
}
