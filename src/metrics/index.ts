export { MetricsModule } from './metrics.module';
export { ServiceMetrics, type MonitoredQueue } from './service-metrics';
export { observeRequests } from './request-observer';
