export { MetricsModule } from './metrics.module';
export { ServiceMetrics, type MonitoredQueue } from './service-metrics';
export { httpMetrics } from './http-metrics.middleware';
