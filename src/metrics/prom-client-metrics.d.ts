/**
 * prom-client's standard process metrics, one module each (what its collectDefaultMetrics calls):
 * each registers its families into the registry given. Untyped by prom-client.
 */
declare module 'prom-client/lib/metrics/*' {
  import type { Registry } from 'prom-client';

  const registerFamilies: (registry: Registry, config: Record<string, unknown>) => void;
  export default registerFamilies;
}
