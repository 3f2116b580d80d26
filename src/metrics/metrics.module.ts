import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PrometheusModule } from '@willsoto/nestjs-prometheus';
import { MetricsController } from './metrics.controller';
import { OUTGOING_CALL_OBSERVER } from '../outbound/outgoing-calls';
import { SIGN_IN_FAILURE_OBSERVER } from '../tokens/sign-in-failures';
import { RequestRouteGuard } from './request-route.guard';
import { ServiceMetrics } from './service-metrics';

/**
 * Global, so that every feature reaches it: outgoing HTTP calls are reported through
 * OUTGOING_CALL_OBSERVER (src/outbound/outgoing-calls.ts), failed sign-ins through SIGN_IN_FAILURE_OBSERVER
 * (src/tokens/sign-in-failures.ts); queues are read from the QueueRegistry.
 * The library's own default-metrics collection is off: it would write into prom-client's
 * process-wide registry; ServiceMetrics collects them into its own.
 */
@Global()
@Module({
  imports: [PrometheusModule.register({ controller: MetricsController, path: '/metrics', defaultMetrics: { enabled: false } })],
  providers: [
    ServiceMetrics,
    { provide: APP_GUARD, useClass: RequestRouteGuard },
    { provide: OUTGOING_CALL_OBSERVER, useExisting: ServiceMetrics },
    { provide: SIGN_IN_FAILURE_OBSERVER, useExisting: ServiceMetrics },
  ],
  exports: [ServiceMetrics, OUTGOING_CALL_OBSERVER, SIGN_IN_FAILURE_OBSERVER],
})
export class MetricsModule {}
