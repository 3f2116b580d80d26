import type { Request } from 'express';
import type { PortcullisPrincipal, ProtectedRequest } from './client';

/** An Express request after the library let it through: `portcullis` holds the verified caller. */
export interface PortcullisRequest extends Request {
  portcullis?: PortcullisPrincipal;
}

/** The route template Express matched (`/orders/:orderId`), when routing already happened. */
export function routeTemplateOf(req: Request): string | undefined {
  // Express types `req.route` as any; read it as unknown.
  const route: unknown = req.route;
  if (typeof route !== 'object' || route === null || !('path' in route)) return undefined;
  return typeof route.path === 'string' ? route.path : undefined;
}

/** The parts of an Express request {@link PortcullisClient.authorize} reads. */
export function toProtectedRequest(req: Request, routeTemplate?: string): ProtectedRequest {
  return {
    authorization: req.headers.authorization,
    routeTemplate: routeTemplate ?? routeTemplateOf(req),
    params: req.params,
    query: req.query,
    headers: req.headers,
  };
}

/** Records the verified caller on the request for the handler. */
export function attachPrincipal(req: Request, principal: PortcullisPrincipal | null): void {
  if (principal !== null) (req as PortcullisRequest).portcullis = principal;
}

/** The verified caller of a request the library let through, if any. */
export function principalOf(req: Request): PortcullisPrincipal | undefined {
  return (req as PortcullisRequest).portcullis;
}
