import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Registry } from 'prom-client';
import { MISNAMED_DEFAULT_GAUGES, ProcessMetrics } from './process-metrics';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A full collection once the current job is over (a WeakRef's target lives at least that long). */
async function collectGarbage(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
}

/** The families of prom-client 15's collectDefaultMetrics, less MISNAMED_DEFAULT_GAUGES. */
const DEFAULT_FAMILIES = [
  'process_cpu_user_seconds_total counter',
  'process_cpu_system_seconds_total counter',
  'process_cpu_seconds_total counter',
  'process_start_time_seconds gauge',
  'process_resident_memory_bytes gauge',
  'process_virtual_memory_bytes gauge',
  'process_heap_bytes gauge',
  'process_open_fds gauge',
  'process_max_fds gauge',
  'nodejs_eventloop_lag_seconds gauge',
  'nodejs_eventloop_lag_min_seconds gauge',
  'nodejs_eventloop_lag_max_seconds gauge',
  'nodejs_eventloop_lag_mean_seconds gauge',
  'nodejs_eventloop_lag_stddev_seconds gauge',
  'nodejs_eventloop_lag_p50_seconds gauge',
  'nodejs_eventloop_lag_p90_seconds gauge',
  'nodejs_eventloop_lag_p99_seconds gauge',
  'nodejs_active_resources gauge',
  'nodejs_active_handles gauge',
  'nodejs_active_requests gauge',
  'nodejs_heap_size_total_bytes gauge',
  'nodejs_heap_size_used_bytes gauge',
  'nodejs_external_memory_bytes gauge',
  'nodejs_heap_space_size_total_bytes gauge',
  'nodejs_heap_space_size_used_bytes gauge',
  'nodejs_heap_space_size_available_bytes gauge',
  'nodejs_version_info gauge',
  'nodejs_gc_duration_seconds histogram',
];

/** Process metrics in a registry of their own, stopped; nothing but a weak reference to the registry stays. */
function stoppedAndDropped(): WeakRef<Registry> {
  const registry = new Registry();
  new ProcessMetrics(registry).stop();
  return new WeakRef(registry);
}

describe('ProcessMetrics', () => {
  it("registers prom-client's default families under their names and types, less the gauges named like counters", async () => {
    const registry = new Registry();
    const metrics = new ProcessMetrics(registry);
    try {
      const families = (await registry.getMetricsAsJSON()).map((family) => `${family.name} ${family.type}`);
      expect([...families].sort()).toEqual([...DEFAULT_FAMILIES].sort());
      for (const name of MISNAMED_DEFAULT_GAUGES) expect(families.join('\n')).not.toContain(name);
    } finally {
      metrics.stop();
    }
  });

  it('reads the event-loop delay sampled since the last scrape, and the lag of the previous one', async () => {
    const registry = new Registry();
    const metrics = new ProcessMetrics(registry);
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const value = async (name: string): Promise<number> => (await registry.getSingleMetric(name)!.get()).values[0].value;
      await registry.metrics();
      // The first scrape started a lag measurement; the second reads it.
      await new Promise((resolve) => setImmediate(resolve));
      expect(await value('nodejs_eventloop_lag_seconds')).toBeGreaterThan(0);
      expect(await value('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0);
    } finally {
      metrics.stop();
    }
  });

  it('lets its registry (and so the app) go once stopped, as nothing else holds them', async () => {
    // Left running, the GC observer (a process-wide list holds it) would keep the registry, its
    // families and whatever their collect functions read, for as long as the process lives.
    const held = stoppedAndDropped();
    await collectGarbage();
    expect(held.deref()).toBeUndefined();
  });
});
