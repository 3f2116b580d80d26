import type { NextFunction, Request, Response } from 'express';
import { routeTemplateOf } from '../common/http';
import { methodLabel, type ServiceMetrics } from './service-metrics';

/**
 * Counts every incoming request from its arrival (so failures before routing, such as 413 and
 * 415, count too) to the end of its response. Labels carry the route TEMPLATE, never the URL,
 * so ids in paths cannot blow up the number of series.
 */
export function httpMetrics(metrics: ServiceMetrics) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const end = metrics.startRequest({ method: methodLabel(request.method), route: () => routeTemplateOf(request) });
    response.once('finish', () => end(response.statusCode));
    // 'close' without 'finish': the client went away before the response was complete.
    response.once('close', () => end(response.writableFinished ? response.statusCode : 'aborted'));
    next();
  };
}
