import { BoundedQueue } from '../queue/bounded-queue';
import { QueueRegistry } from '../queue/queue-registry';
import type { OutgoingCall } from '../outbound/outgoing-calls';
import type { SignInFailureReason } from '../tokens/sign-in-failures';
import { MISNAMED_DEFAULT_GAUGES } from './process-metrics';
import { methodLabel, ServiceMetrics } from './service-metrics';

/** `name{labels} value` lines of the exposition text, for exact assertions. */
async function lines(metrics: ServiceMetrics, prefix: string): Promise<string[]> {
  return (await metrics.render()).split('\n').filter((line) => line.startsWith(prefix));
}

describe('ServiceMetrics', () => {
  /** Every instance a spec makes, stopped after it (as the app's close does). */
  const made: ServiceMetrics[] = [];
  const newMetrics = (...args: ConstructorParameters<typeof ServiceMetrics>): ServiceMetrics => {
    const metrics = new ServiceMetrics(...args);
    made.push(metrics);
    return metrics;
  };
  afterEach(() => {
    for (const metrics of made.splice(0)) metrics.onModuleDestroy();
  });

  it('reads every registered queue at scrape time', async () => {
    const registry = new QueueRegistry();
    const release: (() => void)[] = [];
    const queue = new BoundedQueue<number>({
      name: 'mail',
      capacity: 2,
      concurrency: 1,
      worker: () => new Promise<void>((resolve) => release.push(resolve)),
    });
    registry.register(queue);
    const metrics = newMetrics(registry);

    expect(await lines(metrics, 'portcullis_queue_')).toEqual([
      'portcullis_queue_depth{queue="mail"} 0',
      'portcullis_queue_in_flight{queue="mail"} 0',
      'portcullis_queue_capacity{queue="mail"} 2',
      'portcullis_queue_dropped_total{queue="mail"} 0',
      'portcullis_queue_processed_total{queue="mail"} 0',
    ]);

    for (let item = 0; item < 4; item++) queue.enqueue(item); // 1 in flight, 2 waiting, 1 dropped
    expect(await lines(metrics, 'portcullis_queue_')).toEqual([
      'portcullis_queue_depth{queue="mail"} 2',
      'portcullis_queue_in_flight{queue="mail"} 1',
      'portcullis_queue_capacity{queue="mail"} 2',
      'portcullis_queue_dropped_total{queue="mail"} 1',
      'portcullis_queue_processed_total{queue="mail"} 0',
    ]);

    release.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(await lines(metrics, 'portcullis_queue_processed_total')).toEqual(['portcullis_queue_processed_total{queue="mail"} 1']);
    expect(await lines(metrics, 'portcullis_queue_depth')).toEqual(['portcullis_queue_depth{queue="mail"} 1']);
    while (release.length || queue.inFlight) {
      release.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
  });

  it('works without a queue registry (no queue series)', async () => {
    const metrics = newMetrics();
    expect(metrics.queues()).toEqual([]);
    expect(await lines(metrics, 'portcullis_queue_depth{')).toEqual([]);
  });

  it('records outgoing calls by kind and outcome, and ignores values outside the label sets', async () => {
    const metrics = newMetrics();
    metrics.observe({ kind: 'webhook', outcome: 'success', durationSeconds: 0.02 });
    metrics.observe({ kind: 'webhook', outcome: 'timeout', durationSeconds: 10 });
    metrics.observe({ kind: 'mail', outcome: 'failure', durationSeconds: Number.NaN });
    metrics.observe({ kind: 'ftp', outcome: 'success', durationSeconds: 1 } as unknown as OutgoingCall);
    metrics.observe({ kind: 'webhook', outcome: 'maybe', durationSeconds: 1 } as unknown as OutgoingCall);

    expect(await lines(metrics, 'portcullis_outgoing_http_requests_total')).toEqual([
      'portcullis_outgoing_http_requests_total{kind="webhook",outcome="success"} 1',
      'portcullis_outgoing_http_requests_total{kind="webhook",outcome="timeout"} 1',
      'portcullis_outgoing_http_requests_total{kind="mail",outcome="failure"} 1',
    ]);
    expect(await lines(metrics, 'portcullis_outgoing_http_request_duration_seconds_sum')).toEqual([
      'portcullis_outgoing_http_request_duration_seconds_sum{kind="webhook",outcome="success"} 0.02',
      'portcullis_outgoing_http_request_duration_seconds_sum{kind="webhook",outcome="timeout"} 10',
      'portcullis_outgoing_http_request_duration_seconds_sum{kind="mail",outcome="failure"} 0',
    ]);
  });

  it('counts a request once, under the route known when it ends, and shows it in progress until then', async () => {
    const metrics = newMetrics();
    const request = metrics.startRequest('GET');
    expect(metrics.requestsInProgress).toBe(1);
    expect(await lines(metrics, 'portcullis_http_requests_in_progress')).toEqual([
      'portcullis_http_requests_in_progress{method="GET",route="unmatched"} 1',
    ]);
    metrics.routed(request, '/memberships/:membershipId/users/:id');
    expect(await lines(metrics, 'portcullis_http_requests_in_progress')).toEqual([
      'portcullis_http_requests_in_progress{method="GET",route="/memberships/:membershipId/users/:id"} 1',
    ]);
    metrics.endRequest(request, '/memberships/:membershipId/users/:id', 200);
    metrics.endRequest(request, '/memberships/:membershipId/users/:id', 'aborted');
    metrics.routed(request, '/late');
    expect(metrics.requestsInProgress).toBe(0);
    expect(await lines(metrics, 'portcullis_http_requests_in_progress{')).toEqual([]);
    expect(await lines(metrics, 'portcullis_http_requests_total')).toEqual([
      'portcullis_http_requests_total{method="GET",route="/memberships/:membershipId/users/:id",status_code="200"} 1',
    ]);
  });

  it('keeps instances apart: each has its own registry, and each renders the process metrics', async () => {
    const first = newMetrics();
    const second = newMetrics();
    first.endRequest(first.startRequest('POST'), '/setup', 201);
    expect(await lines(first, 'portcullis_http_requests_total')).toHaveLength(1);
    expect(await lines(second, 'portcullis_http_requests_total')).toEqual([]);
    for (const metrics of [first, second]) {
      const text = await metrics.render();
      expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
      expect(text).toMatch(/^nodejs_eventloop_utilization_ratio (0|1|0\.\d+)/m);
    }
  });

  it('counts failed sign-ins by reason, every reason shown from 0, unknown reasons ignored', async () => {
    const metrics = newMetrics();
    metrics.signInFailed('InvalidCredentials');
    metrics.signInFailed('InvalidCredentials');
    metrics.signInFailed('UserInactive');
    metrics.signInFailed('locked');
    metrics.signInFailed('SomethingElse' as SignInFailureReason);
    expect(await lines(metrics, 'portcullis_sign_in_failures_total')).toEqual([
      'portcullis_sign_in_failures_total{reason="MembershipIdRequired"} 0',
      'portcullis_sign_in_failures_total{reason="ModelValidationError"} 0',
      'portcullis_sign_in_failures_total{reason="MembershipNotFound"} 0',
      'portcullis_sign_in_failures_total{reason="InvalidCredentials"} 2',
      'portcullis_sign_in_failures_total{reason="UserInactive"} 1',
      'portcullis_sign_in_failures_total{reason="locked"} 1',
    ]);
  });

  it('leaves out the gauges named like counters (promtool), keeping the counts by type', async () => {
    const text = await newMetrics().render();
    for (const name of MISNAMED_DEFAULT_GAUGES) expect(text).not.toContain(name);
    expect(text).toMatch(/^# TYPE nodejs_active_handles gauge$/m);
    expect(text).toMatch(/^# TYPE nodejs_active_resources gauge$/m);
  });

  it('bounds the method label', () => {
    expect(methodLabel('get')).toBe('GET');
    expect(methodLabel('PROPFIND')).toBe('OTHER');
    expect(methodLabel(undefined)).toBe('OTHER');
  });
});
