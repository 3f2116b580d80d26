import { Injectable, type OnModuleDestroy, Optional } from '@nestjs/common';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { UNMATCHED_ROUTE } from '../common/http';
import { QueueRegistry } from '../queue/queue-registry';
import type { OutgoingCall, OutgoingCallObserver } from '../outbound/outgoing-calls';
import { SIGN_IN_FAILURE_REASONS, type SignInFailureObserver, type SignInFailureReason } from '../tokens/sign-in-failures';
import { ProcessMetrics } from './process-metrics';

/** What the metrics read from a bounded queue, at scrape time (so nothing is paid per item). */
export interface MonitoredQueue {
  readonly name: string;
  readonly capacity: number;
  /** Items waiting. */
  readonly depth: number;
  readonly inFlight: number;
  /** Dropped because the queue was full, since start. */
  readonly dropped: number;
  /** Worker completions (success or failure), since start. */
  readonly processed: number;
}

const OUTGOING_CALL_KINDS: readonly string[] = ['webhook', 'mail', 'provider'];
const OUTGOING_CALL_OUTCOMES: readonly string[] = ['success', 'failure', 'timeout'];

/** Seconds; from a fast cached check to a slow argon2 sign-in under load. */
const REQUEST_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds; outgoing calls time out after 10 s by default (WEBHOOK_TIMEOUT_MS, up to 120 s). */
const OUTGOING_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The per-queue families, one series per queue read at each scrape, in the order /metrics has always listed them. */
const QUEUE_FAMILIES: readonly { type: 'gauge' | 'counter'; name: string; help: string; read: (queue: MonitoredQueue) => number }[] = [
  { type: 'gauge', name: 'portcullis_queue_depth', help: 'Items waiting in an in-memory queue', read: (queue) => queue.depth },
  { type: 'gauge', name: 'portcullis_queue_in_flight', help: 'Items of an in-memory queue being worked on now', read: (queue) => queue.inFlight },
  {
    type: 'gauge',
    name: 'portcullis_queue_capacity',
    help: 'Items an in-memory queue can hold waiting before it drops new ones',
    read: (queue) => queue.capacity,
  },
  { type: 'counter', name: 'portcullis_queue_dropped_total', help: 'Items dropped because their queue was full', read: (queue) => queue.dropped },
  { type: 'counter', name: 'portcullis_queue_processed_total', help: 'Items whose worker finished (success or failure)', read: (queue) => queue.processed },
];

/** One series of a family read at scrape time: its labels and its value. */
type ScrapeSample<L extends string> = readonly [labels: Partial<Record<L, string>>, value: number];

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Bounds label cardinality: Node accepts dozens of methods, a scanner could try each. */
export function methodLabel(method: string | undefined): string {
  const upper = (method ?? '').toUpperCase();
  return KNOWN_METHODS.has(upper) ? upper : 'OTHER';
}

/**
 * One incoming request while it is served, as the in-progress gauge reads it at scrape time:
 * plain values only, never the request or a closure over it (see `startRequest`).
 */
export interface RequestInProgress {
  readonly method: string;
  /** "unmatched" until Nest has routed the request (RequestRouteGuard), then its route template. */
  route: string;
  readonly started: bigint;
  ended: boolean;
}

/**
 * The metrics of ONE app instance, in a registry of its own (several instances can live in one
 * process, as the tests run them; prom-client's global registry would make them collide).
 * Served by GET /metrics; every family is described in its help text.
 */
@Injectable()
export class ServiceMetrics implements OutgoingCallObserver, SignInFailureObserver, OnModuleDestroy {
  readonly registry = new Registry();
  /** prom-client's standard process metrics, in this registry; stopped with the app. */
  private readonly processMetrics: ProcessMetrics;

  private readonly liveRequests = new Set<RequestInProgress>();
  private lastUtilization: EventLoopUtilization | undefined;

  private readonly httpRequests = new Counter({
    name: 'portcullis_http_requests_total',
    help: 'Incoming HTTP requests that ended, by method, route template and status code ("aborted" when the client went away first)',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [this.registry],
  });

  private readonly httpDuration = new Histogram({
    name: 'portcullis_http_request_duration_seconds',
    help: 'Time from the arrival of an incoming HTTP request to the end of its response, by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: REQUEST_DURATION_BUCKETS,
    registers: [this.registry],
  });

  private readonly outgoingCalls = new Counter({
    name: 'portcullis_outgoing_http_requests_total',
    help: 'Outgoing HTTP calls (webhook receivers, mail interfaces, identity providers) by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly outgoingDuration = new Histogram({
    name: 'portcullis_outgoing_http_request_duration_seconds',
    help: 'Duration of outgoing HTTP calls by kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    buckets: OUTGOING_DURATION_BUCKETS,
    registers: [this.registry],
  });

  private readonly signInFailures = new Counter({
    name: 'portcullis_sign_in_failures_total',
    help: 'Failed sign-ins (POST /generate-token with credentials) by reason: the error code answered, locked for a 429 TooManySignInAttempts',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  /**
   * Queues are read from the app's QueueRegistry (src/queue): a queue owner registers its
   * queue there once. Optional so that the metrics work in an app without queues.
   */
  constructor(@Optional() private readonly queueRegistry?: QueueRegistry) {
    this.registerReadAtScrape(
      'gauge',
      {
        name: 'portcullis_http_requests_in_progress',
        help: 'Incoming HTTP requests being served now, by method and route template ("unmatched" until routed)',
        labelNames: ['method', 'route'] as const,
      },
      () => [...this.liveRequests].map((request) => [{ method: request.method, route: request.route }, 1] as const),
    );

    // Every reason shows from the start (at 0), so a rate over it has a series to work on.
    for (const reason of SIGN_IN_FAILURE_REASONS) this.signInFailures.inc({ reason }, 0);
    this.registerQueueFamilies();
    this.registerDurableQueueFamilies();
    this.processMetrics = new ProcessMetrics(this.registry);
    this.registerRuntimeFamilies();
  }

  /** Prometheus text exposition of every family. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** Stops what the process metrics sample in the background (application shutdown). */
  onModuleDestroy(): void {
    this.processMetrics.stop();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The app's queues now (the shutdown sequence logs what they lost). */
  queues(): MonitoredQueue[] {
    return this.queueRegistry ? [...this.queueRegistry.list()] : [];
  }

  /**
   * One outgoing HTTP call that was sent (OUTGOING_CALL_OBSERVER, see src/outbound/outgoing-calls.ts).
   * Never throws: metrics must not break a delivery. Unknown kinds or outcomes are ignored, so
   * a caller's mistake cannot add label values.
   */
  observe(call: OutgoingCall): void {
    if (!OUTGOING_CALL_KINDS.includes(call.kind) || !OUTGOING_CALL_OUTCOMES.includes(call.outcome)) return;
    const seconds = Number.isFinite(call.durationSeconds) && call.durationSeconds > 0 ? call.durationSeconds : 0;
    const labels = { kind: call.kind, outcome: call.outcome };
    this.outgoingCalls.inc(labels);
    this.outgoingDuration.observe(labels, seconds);
  }

  /** One failed sign-in (SIGN_IN_FAILURE_OBSERVER, see src/tokens/sign-in-failures.ts). */
  signInFailed(reason: SignInFailureReason): void {
    if (SIGN_IN_FAILURE_REASONS.includes(reason)) this.signInFailures.inc({ reason });
  }

  /**
   * Called when a request arrives; `endRequest` ends it. The set of requests in progress lives as
   * long as the app, so what it holds must not reach the request: with an entry that read the route
   * through a closure over the Express request, `/me` cost about a tenth more CPU per request. A plain HTTP server
   * holding its requests the same way showed no such cost, so it comes from the larger graph a
   * Nest request is (young-generation GC, by every sign); how exactly, we did not pin down.
   */
  startRequest(method: string): RequestInProgress {
    const request: RequestInProgress = { method, route: UNMATCHED_ROUTE, started: process.hrtime.bigint(), ended: false };
    this.liveRequests.add(request);
    return request;
  }

  /** The route template of a request in progress, once it is known. */
  routed(request: RequestInProgress, route: string): void {
    if (!request.ended) request.route = route;
  }

  /**
   * Counts a request under `route`, the template known when it ended; only the first call counts.
   * Its duration in seconds (the one observed; 0 after the first call).
   */
  endRequest(request: RequestInProgress, route: string, statusCode: number | 'aborted'): number {
    if (request.ended) return 0;
    request.ended = true;
    this.liveRequests.delete(request);
    const labels = { method: request.method, route, status_code: String(statusCode) };
    const seconds = Number(process.hrtime.bigint() - request.started) / 1e9;
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
    return seconds;
  }

  /** Requests being served now (the shutdown sequence waits for them). */
  get requestsInProgress(): number {
    return this.liveRequests.size;
  }

  /**
   * A family whose series are all read at scrape time: each scrape empties it and adds the samples
   * `read` answers (a label set named twice adds up). The one way the in-progress requests and the
   * queues are counted, so that nothing is paid per request or per item between scrapes.
   */
  private registerReadAtScrape<L extends string>(
    type: 'gauge' | 'counter',
    family: { name: string; help: string; labelNames: readonly L[] },
    read: () => Iterable<ScrapeSample<L>> | Promise<Iterable<ScrapeSample<L>>>,
  ): void {
    const options = {
      name: family.name,
      help: family.help,
      labelNames: family.labelNames,
      registers: [this.registry],
      async collect(this: Gauge<L> | Counter<L>) {
        this.reset();
        for (const [labels, value] of await read()) this.inc(labels, value);
      },
    };
    if (type === 'gauge') new Gauge(options);
    else new Counter(options);
  }

  private registerQueueFamilies(): void {
    for (const family of QUEUE_FAMILIES) {
      this.registerReadAtScrape(family.type, { name: family.name, help: family.help, labelNames: ['queue'] as const }, () =>
        this.queues().map((queue) => [{ queue: queue.name }, family.read(queue)] as const),
      );
    }
  }

  /**
   * Queues kept in the database (durable webhook deliveries): the backlog of every instance, read
   * with one query per gauge at each scrape, and this instance's attempts by outcome.
   */
  private registerDurableQueueFamilies(): void {
    const durable = () => this.queueRegistry?.listDurable() ?? [];
    const backlogs = async () => Promise.all(durable().map(async (queue) => ({ name: queue.name, ...(await queue.backlog()) })));
    const backlogGauges = [
      { name: 'portcullis_durable_queue_pending', help: 'Items waiting in a database-backed queue (all instances), e.g. webhook deliveries not yet finished', read: 'pending' },
      { name: 'portcullis_durable_queue_oldest_pending_seconds', help: 'Age of the oldest item waiting in a database-backed queue (0 when none)', read: 'oldestAgeSeconds' },
    ] as const;
    for (const gauge of backlogGauges) {
      this.registerReadAtScrape('gauge', { name: gauge.name, help: gauge.help, labelNames: ['queue'] as const }, async () =>
        (await backlogs()).map((backlog) => [{ queue: backlog.name }, backlog[gauge.read]] as const),
      );
    }
    this.registerReadAtScrape(
      'counter',
      {
        name: 'portcullis_durable_queue_attempts_total',
        help: 'Attempts this instance made on items of a database-backed queue, by outcome',
        labelNames: ['queue', 'outcome'] as const,
      },
      () => durable().flatMap((queue) => Object.entries(queue.attempts()).map(([outcome, count]) => [{ queue: queue.name, outcome }, count] as const)),
    );
  }

  private registerRuntimeFamilies(): void {
    const sampleUtilization = (): number => {
      const now = performance.eventLoopUtilization();
      const since = this.lastUtilization ? performance.eventLoopUtilization(now, this.lastUtilization) : now;
      this.lastUtilization = now;
      return since.utilization;
    };
    new Gauge({
      name: 'nodejs_eventloop_utilization_ratio',
      help: 'Share of time the event loop was busy (0..1) since the previous scrape (since start on the first)',
      registers: [this.registry],
      collect() {
        this.set(sampleUtilization());
      },
    });

    // libuv runs argon2 hashing, DNS and file work on this pool; its size bounds sign-in throughput.
    const threadPoolSize = Number(process.env.UV_THREADPOOL_SIZE) || 4;
    new Gauge({
      name: 'nodejs_libuv_threadpool_size',
      help: 'Threads of the libuv pool that runs password hashing (UV_THREADPOOL_SIZE, 4 when unset)',
      registers: [this.registry],
      collect() {
        this.set(threadPoolSize);
      },
    });
  }
}
