import type { NextFunction, Request, Response } from 'express';
import { routeTemplateOf } from '../common/http';
import { methodLabel, type RequestInProgress, type ServiceMetrics } from './service-metrics';

/** Where the middleware leaves a request's entry for RequestRouteGuard. */
const IN_PROGRESS = Symbol('portcullis.requestInProgress');

type MeasuredRequest = Request & { [IN_PROGRESS]?: RequestInProgress };

/**
 * Counts every incoming request from its arrival (so failures before routing, such as 413 and
 * 415, count too) to the end of its response. Labels carry the route TEMPLATE, never the URL,
 * so ids in paths cannot blow up the number of series.
 */
export function httpMetrics(metrics: ServiceMetrics) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const inProgress = metrics.startRequest(methodLabel(request.method));
    (request as MeasuredRequest)[IN_PROGRESS] = inProgress;
    response.once('finish', () => metrics.endRequest(inProgress, routeTemplateOf(request), response.statusCode));
    // 'close' without 'finish': the client went away before the response was complete.
    response.once('close', () => metrics.endRequest(inProgress, routeTemplateOf(request), response.writableFinished ? response.statusCode : 'aborted'));
    next();
  };
}

/** Tells the in-progress gauge the route of a request Nest has just routed (RequestRouteGuard). */
export function markRouted(metrics: ServiceMetrics, request: Request): void {
  const inProgress = (request as MeasuredRequest)[IN_PROGRESS];
  if (inProgress) metrics.routed(inProgress, routeTemplateOf(request));
}
