import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { assignRequestId, requestIdOf, routeTemplateOf } from '../common/http';
import { methodLabel, type RequestInProgress, type ServiceMetrics } from './service-metrics';

/** Where the observer leaves a request's entry, for RequestRouteGuard and for the end of the response. */
const IN_PROGRESS = Symbol('portcullis.requestInProgress');

type ObservedRequest = Request & { [IN_PROGRESS]?: RequestInProgress };

/**
 * One middleware for what is observed of every request: it gets an id (a sane incoming
 * X-Request-Id is kept, and echoed), it is counted from its arrival (so failures before routing,
 * such as 413 and 415, count too) to the end of its response, and one log line says how it ended.
 * Metric labels carry the route TEMPLATE, never the URL, so ids in paths cannot blow up the number
 * of series.
 *
 * Why one middleware with two listeners made once: a request used to get three listeners, each a
 * closure over it (two of them `once` wrappers), from two middlewares. The listeners here are the
 * same two functions for every request and read what they need from the response itself
 * (`this`, and `this.req`): nothing is allocated for them per request.
 */
export function observeRequests(metrics: ServiceMetrics, logger: Logger) {
  // The line's fields are fixed and carry no secret, so it skips the redaction pass: that halves
  // the cost of a line (about 5 µs of every request). Absent when the level leaves it out.
  const lines = logger.isLevelEnabled('info') ? logger.child({}, { redact: [] }) : undefined;

  function onFinish(this: Response): void {
    const request = this.req as ObservedRequest;
    const inProgress = request[IN_PROGRESS];
    if (!inProgress) return;
    const route = routeTemplateOf(request);
    const durationSeconds = metrics.endRequest(inProgress, route, this.statusCode);
    lines?.info(
      {
        requestId: requestIdOf(request),
        method: request.method,
        route,
        status: this.statusCode,
        durationMs: Math.round(durationSeconds * 1e5) / 100,
      },
      'request',
    );
  }

  // 'close' without 'finish': the client went away before the response was complete.
  function onClose(this: Response): void {
    const inProgress = (this.req as ObservedRequest)[IN_PROGRESS];
    if (inProgress && !this.writableFinished) metrics.endRequest(inProgress, routeTemplateOf(this.req), 'aborted');
  }

  return (request: Request, response: Response, next: NextFunction): void => {
    const observed = request as ObservedRequest;
    observed[IN_PROGRESS] = metrics.startRequest(methodLabel(request.method));
    assignRequestId(request, response);
    response.on('finish', onFinish);
    response.on('close', onClose);
    next();
  };
}

/** Tells the in-progress gauge the route of a request Nest has just routed (RequestRouteGuard). */
export function markRouted(metrics: ServiceMetrics, request: Request): void {
  const inProgress = (request as ObservedRequest)[IN_PROGRESS];
  if (inProgress) metrics.routed(inProgress, routeTemplateOf(request));
}
