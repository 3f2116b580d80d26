import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { PrometheusController } from '@willsoto/nestjs-prometheus';
import type { Response } from 'express';
import { Public } from '../common/access-decorators';
import { ServiceMetrics } from './service-metrics';
import { ApiRoute } from '../common/api-route';

/**
 * GET /metrics from this app's own registry (the library's base controller reads prom-client's
 * process-wide registry, which several app instances in one process would share).
 */
@ApiTags('operations')
@Controller('metrics')
export class MetricsController extends PrometheusController {
  constructor(private readonly metrics: ServiceMetrics) {
    super();
  }

  @Get()
  @Public()
  @Header('Cache-Control', 'no-store')
  @ApiRoute({
    summary: 'Metrics in the Prometheus text format',
    description:
      'Incoming HTTP requests (count, duration, in progress) by method, route template and status; outgoing HTTP calls by ' +
      'kind and outcome; in-memory queues; Node.js memory, garbage collection, event loop and thread pool. ' +
      'No authentication: do not expose this route publicly.',
    produces: ['text/plain'],
    answers: [{ status: 200, description: 'Prometheus text exposition format 0.0.4', schema: { type: 'string' } }],
  })
  override async index(@Res({ passthrough: true }) response: Response): Promise<string> {
    response.setHeader('Content-Type', this.metrics.contentType);
    return this.metrics.render();
  }
}
