import { constants, monitorEventLoopDelay, type IntervalHistogram, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { Gauge, Histogram, type Registry } from 'prom-client';
// prom-client's standard process metrics one by one (what its collectDefaultMetrics registers)
// but for the two that start work it never stops: event-loop lag and GC durations, made below.
import heapSizeAndUsed from 'prom-client/lib/metrics/heapSizeAndUsed';
import heapSpacesSizeAndUsed from 'prom-client/lib/metrics/heapSpacesSizeAndUsed';
import osMemoryHeap from 'prom-client/lib/metrics/osMemoryHeap';
import processCpuTotal from 'prom-client/lib/metrics/processCpuTotal';
import processHandles from 'prom-client/lib/metrics/processHandles';
import processMaxFileDescriptors from 'prom-client/lib/metrics/processMaxFileDescriptors';
import processOpenFileDescriptors from 'prom-client/lib/metrics/processOpenFileDescriptors';
import processRequests from 'prom-client/lib/metrics/processRequests';
import processResources from 'prom-client/lib/metrics/processResources';
import processStartTime from 'prom-client/lib/metrics/processStartTime';
import version from 'prom-client/lib/metrics/version';

/** prom-client's default gauges whose `_total` suffix Prometheus reserves for counters. */
export const MISNAMED_DEFAULT_GAUGES: readonly string[] = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** prom-client's: the event-loop delay is sampled every 10 ms. */
const EVENT_LOOP_RESOLUTION_MS = 10;
/** prom-client's buckets for nodejs_gc_duration_seconds. */
const GC_DURATION_BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];
const GC_KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/**
 * The families of prom-client's collectDefaultMetrics (memory, heap spaces, GC durations,
 * event-loop lag, CPU, file descriptors, active handles, requests and resources), under the same
 * names, into `registry`, and stopped by `stop`. collectDefaultMetrics starts an event-loop delay
 * histogram and a GC observer that nothing can stop: each app made in a process (each test file's,
 * each embedder's) would leave both running, and with them the app and everything it held, for
 * as long as the process lives. Those two are made here, the rest are prom-client's own.
 */
export class ProcessMetrics {
  private readonly delay: IntervalHistogram;
  private readonly gcObserver: PerformanceObserver;

  constructor(registry: Registry) {
    for (const register of [
      processCpuTotal,
      processStartTime,
      osMemoryHeap,
      processOpenFileDescriptors,
      processMaxFileDescriptors,
      processResources,
      processHandles,
      processRequests,
      heapSizeAndUsed,
      heapSpacesSizeAndUsed,
      version,
    ]) {
      register(registry, {});
    }
    // Gauges named like counters fail `promtool check metrics`; the same counts stay in the
    // by-type gauges (nodejs_active_handles{type} and so on): sum them for the total.
    for (const name of MISNAMED_DEFAULT_GAUGES) registry.removeSingleMetric(name);

    this.delay = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
    this.delay.enable();
    this.registerEventLoopLag(registry);

    const gcDuration = new Histogram({
      name: 'nodejs_gc_duration_seconds',
      help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
      labelNames: ['kind'] as const,
      buckets: GC_DURATION_BUCKETS,
      registers: [registry],
    });
    this.gcObserver = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        // A GC entry's detail names its kind (Node 16 and later).
        const kind = GC_KINDS[(entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? -1];
        if (kind) gcDuration.observe({ kind }, entry.duration / 1000);
      }
    });
    this.gcObserver.observe({ entryTypes: ['gc'] });
  }

  /** Stops the event-loop sampling and the GC observer (the app's close). */
  stop(): void {
    this.delay.disable();
    this.gcObserver.disconnect();
  }

  /**
   * As prom-client's: nodejs_eventloop_lag_seconds is how late a setImmediate queued at the last
   * scrape ran; the others are the sampled delay's min, max, mean, standard deviation and
   * percentiles since the last scrape. The lag gauge, registered first, sets them all at each
   * scrape before they are read, then starts the sampling over.
   */
  private registerEventLoopLag(registry: Registry): void {
    const delay = this.delay;
    const sampled = (name: string, help: string): Gauge => new Gauge({ name, help, registers: [registry], aggregator: 'average' });
    const lag = new Gauge({
      name: 'nodejs_eventloop_lag_seconds',
      help: 'Lag of event loop in seconds.',
      registers: [registry],
      aggregator: 'average',
      collect() {
        const queued = process.hrtime.bigint();
        setImmediate(() => lag.set(Number(process.hrtime.bigint() - queued) / 1e9));
        min.set(delay.min / 1e9);
        max.set(delay.max / 1e9);
        mean.set(delay.mean / 1e9);
        stddev.set(delay.stddev / 1e9);
        p50.set(delay.percentile(50) / 1e9);
        p90.set(delay.percentile(90) / 1e9);
        p99.set(delay.percentile(99) / 1e9);
        delay.reset();
      },
    });
    const min = sampled('nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.');
    const max = sampled('nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.');
    const mean = sampled('nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.');
    const stddev = sampled('nodejs_eventloop_lag_stddev_seconds', 'The standard deviation of the recorded event loop delays.');
    const p50 = sampled('nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays.');
    const p90 = sampled('nodejs_eventloop_lag_p90_seconds', 'The 90th percentile of the recorded event loop delays.');
    const p99 = sampled('nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.');
  }
}
