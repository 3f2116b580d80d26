import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { markRouted } from './request-observer';
import { ServiceMetrics } from './service-metrics';

/**
 * Not an access rule: it always lets the request through. A global guard is the first point at
 * which every Nest route has been matched, so it is where the in-progress gauge learns a request's
 * route template (before, it counts under "unmatched"). Routes outside Nest (the Swagger UI's
 * files) stay "unmatched" while in progress; every request is counted under its template when it
 * ends. A guard rather than an interceptor: an interceptor would wrap every handler in an
 * Observable, and the token routes have none today.
 */
@Injectable()
export class RequestRouteGuard implements CanActivate {
  constructor(private readonly metrics: ServiceMetrics) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() === 'http') markRouted(this.metrics, context.switchToHttp().getRequest<Request>());
    return true;
  }
}
