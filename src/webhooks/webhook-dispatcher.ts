import { type BeforeApplicationShutdown, Inject, Injectable, type OnApplicationBootstrap, Optional } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { newId } from '../common/ids';
import { LOGGER } from '../common/logger';
import type { WebhookRow } from '../database/schema';
import { Batcher } from '../common/batcher';
import { EventRecorder, type RecordedEvent } from '../events/event-recorder';
import { isResultEventType, SYSTEM_UTILIZER } from '../events/event-types';
import { BoundedQueue, type DrainResult } from '../queue/bounded-queue';
import { HookListCache } from '../queue/event-triggered-delivery';
import { QueueRegistry } from '../queue/queue-registry';
import { settleWithin } from '../queue/settle-within';
import type { DeliveryEvent, DeliveryWebhook } from './delivery-request';
import { OutboundHttp } from '../outbound/outbound.module';
import { OUTGOING_CALL_OBSERVER, type OutgoingCall, type OutgoingCallObserver, type OutgoingCallTotals } from '../outbound/outgoing-calls';
import { type AttemptResult, attemptOnce, type DeliveryContext } from './webhook-delivery';
import { type AttemptOutcome, type ClaimedDelivery, DeliveryRepository, type FinishedAttempt } from './delivery.repository';
import { WebhookRepository } from './webhook.repository';

/** Limits of the specification: 10,000 waiting calls (WEBHOOK_QUEUE_CAPACITY), 8 in parallel. */
export const WEBHOOK_QUEUE_NAME = 'webhooks';
export const WEBHOOK_QUEUE_CONCURRENCY = 8;
/**
 * How long this instance trusts its list of a membership's active webhooks for one event type,
 * to decide whether a commit should wake the claim at once. A stale "none" costs at most the
 * claim timer's delay, never a delivery: the deliveries are written with the event, exactly.
 */
export const WEBHOOK_LOOKUP_TTL_MS = 5_000;
/** The shortest time between two claims of one instance under load (see `wake`). */
const CLAIM_GAP_MS = 10;
/** Most retry times an instance keeps a timer for; the claim interval covers the rest. */
const MAX_RETRY_WAKES = 10_000;
/**
 * A delivery that waited in the queue longer than this since its claim looks at its row and its
 * webhook again before its call: meanwhile the webhook may have been made passive, deleted or
 * changed, and the row canceled or redelivered. One that starts at once skips the extra read.
 */
const STALE_CLAIM_MS = 50;
/** Most deliveries one claim statement takes. */
const CLAIM_BATCH = 100;
/** Backoff: WEBHOOK_RETRY_BASE_MS doubled per attempt, ±20% jitter, at most this. */
const MAX_RETRY_DELAY_MS = 60_000;
const WEBHOOK_CHANGE_EVENTS = new Set(['WebhookCreated', 'WebhookUpdated', 'WebhookDeleted']);

/** The attempt outcomes the metrics count (the call's, or why no call was made). */
type AttemptCount = AttemptResult['outcome'] | 'canceled';

/**
 * The wait before attempt `finished + 1`, after `finished` failed attempts: base · 2^(finished-1),
 * times a random factor in [0.8, 1.2), at most 60 s. The jitter spreads the retries of many
 * deliveries that failed together (a receiver that was down) so they do not return together.
 */
export function retryDelayMs(baseMs: number, finished: number, random: () => number = Math.random): number {
  const doubled = baseMs * 2 ** Math.max(0, finished - 1);
  return Math.min(MAX_RETRY_DELAY_MS, Math.round(doubled * (0.8 + 0.4 * random())));
}

function toDeliveryWebhook(row: WebhookRow): DeliveryWebhook {
  return { id: row.id, membershipId: row.membershipId, tryCount: row.tryCount, request: row.request, secret: row.secret };
}

/**
 * Calls webhooks for committed events, at least once (contract "Durable webhook delivery"). The
 * statement that records an event also writes its deliveries (one per active webhook on its type),
 * so the database holds every call owed. This dispatcher claims due deliveries (FOR UPDATE SKIP
 * LOCKED, with a lease of WEBHOOK_LEASE_SECONDS) into the bounded in-memory queue, which runs
 * them 8 at a time; it claims no more than the queue has room for, so a full queue leaves rows
 * pending instead of dropping them. A commit on this instance with a webhook on its type wakes the
 * claim at once; a timer covers the rest. The request that caused an event never waits for a call.
 * An instance with WEBHOOK_DISPATCH=off claims nothing: it announces its deliveries by NOTIFY and
 * the dispatching instances, listening, claim them at once.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly deliveries: BoundedQueue<ClaimedDelivery>;
  /** Aborted when the drain deadline passes: calls still running end at once and stay pending. */
  private readonly stop = new AbortController();
  private readonly hookLists: HookListCache<DeliveryWebhook>;
  private readonly totals: OutgoingCallTotals = { success: 0, failure: 0, timeout: 0, durationSecondsSum: 0 };
  private readonly attemptCounts: Record<AttemptCount, number> = { success: 0, failure: 0, timeout: 0, not_sent: 0, blocked: 0, canceled: 0 };
  /** Deliveries this instance holds a lease on (queued or running), with that lease: released at stop. */
  private readonly held = new Map<string, string>();
  private claiming: Promise<void> | undefined;
  private lastClaimAt = 0;
  private wakeAgain = false;
  /** The last claim filled its batch or the queue: claim again as soon as a slot frees. */
  private moreDue = false;
  private stopping = false;
  private claimTimer: NodeJS.Timeout | undefined;
  private retryTimer: { at: number; timer: NodeJS.Timeout } | undefined;
  /** Times of retries this instance scheduled, earliest first. */
  private readonly retryWakes: number[] = [];
  private draining: Promise<DrainResult> | undefined;
  /** Ends this instance's LISTEN for deliveries other instances wrote (server database, dispatching instances). */
  private stopListening: (() => Promise<void>) | undefined;
  /** An instance with WEBHOOK_DISPATCH=off: its `announceDue` is on its way, or waits out CLAIM_GAP_MS after the last one. */
  private announcing = false;
  private announceAgain = false;
  /**
   * Attempt results, written together: the results that arrive while one write is on its way go
   * in the next, so under load a delivery's result costs a share of one statement, not one of its own.
   */
  private readonly results = new Batcher<FinishedAttempt>(async (finished) => {
    const held = await this.store.finishAttempts(finished);
    if (held < finished.length) this.logger.info({ deliveries: finished.length - held }, 'webhook deliveries claimed again or redelivered meanwhile; their results are left out');
  });

  constructor(
    private readonly recorder: EventRecorder,
    webhooks: WebhookRepository,
    private readonly store: DeliveryRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: QueueRegistry,
    private readonly outbound: OutboundHttp,
    @Optional() @Inject(OUTGOING_CALL_OBSERVER) private readonly observer?: OutgoingCallObserver,
  ) {
    this.deliveries = new BoundedQueue<ClaimedDelivery>({
      name: WEBHOOK_QUEUE_NAME,
      capacity: config.webhookQueueCapacity,
      concurrency: WEBHOOK_QUEUE_CONCURRENCY,
      worker: (delivery) => this.attempt(delivery),
      // Never happens (a claim takes no more than the free room); the row stays pending and its lease expires.
      onDrop: (delivery) => this.logger.warn({ webhookId: delivery.webhookId, deliveryId: delivery.id }, 'webhook queue is full; the delivery stays pending'),
      onError: (error, delivery) => this.logger.error({ err: error, webhookId: delivery.webhookId, deliveryId: delivery.id }, 'webhook delivery failed unexpectedly'),
    });
    registry.register(this.deliveries);
    registry.registerDurable({
      name: WEBHOOK_QUEUE_NAME,
      backlog: () => this.store.pendingStats(),
      attempts: () => ({ ...this.attemptCounts }),
    });
    this.hookLists = new HookListCache({
      maxEntries: config.cacheMaxEntries,
      ttlMs: WEBHOOK_LOOKUP_TTL_MS,
      findActiveFor: (membershipId, eventType) => webhooks.findActiveFor(membershipId, eventType).then((rows) => rows.map(toDeliveryWebhook)),
    });
    recorder.onCommitted((events) => this.onCommitted(events));
  }

  /**
   * The most deliveries this instance holds (running or queued). A lease runs from the claim, so a
   * queued delivery must start before its lease ends, or another claim (here or elsewhere) would
   * send it again: with 8 calls at a time of at most WEBHOOK_TIMEOUT_MS each, the queue holds no
   * more than the calls that surely start within the lease, less one round for safety.
   */
  private get maxHeld(): number {
    const rounds = Math.floor((this.config.webhookLeaseSeconds * 1000) / this.config.webhookTimeoutMs) - 1;
    return WEBHOOK_QUEUE_CONCURRENCY * Math.max(1, rounds);
  }

  /** The in-memory hand-off (depth, inFlight, capacity...); also in QueueRegistry. */
  get queue(): BoundedQueue<ClaimedDelivery> {
    return this.deliveries;
  }

  /** Outgoing webhook calls since start, per outcome (a copy). */
  outgoingCallTotals(): OutgoingCallTotals {
    return { ...this.totals };
  }

  /** Forgets this instance's cached webhook lists of a membership. */
  invalidate(membershipId: string): void {
    this.hookLists.invalidate(membershipId);
  }

  async onApplicationBootstrap(): Promise<void> {
    // WEBHOOK_DISPATCH=off: this instance writes deliveries and announces them; others call.
    if (!this.config.webhookDispatch) return;
    this.claimTimer = setInterval(() => this.wake(), this.config.webhookClaimIntervalMs);
    this.claimTimer.unref();
    try {
      this.stopListening = await this.store.listenForDue(() => this.wake());
    } catch (error) {
      // The claim timer still finds every delivery, a claim interval later.
      this.logger.warn({ err: error }, 'could not listen for webhook deliveries written by other instances');
    }
    // Deliveries left by an earlier run (a crash, a stop) are due now.
    this.wake();
  }

  /**
   * Stops claiming, lets the queued deliveries go back (pending, due at once, for any instance),
   * and waits for the calls in flight until `timeoutMs`; calls still running then are cut and
   * stay pending too. `lost` counts the calls cut. Idempotent.
   */
  drain(timeoutMs: number): Promise<DrainResult> {
    this.draining ??= this.drainOnce(timeoutMs);
    return this.draining;
  }

  /** Before the database closes (onApplicationShutdown), so results and releases can be written. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.drain(this.config.shutdownDrainMs);
    this.hookLists.close();
  }

  private async drainOnce(timeoutMs: number): Promise<DrainResult> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    this.stopping = true;
    clearInterval(this.claimTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    await this.stopListening?.();
    if (this.claiming) await settleWithin([this.claiming], deadline - Date.now());
    // Queued deliveries are skipped by their worker (see `attempt`): only the running calls are waited for.
    const running = this.deliveries.inFlight;
    const result = await this.deliveries.drain(Math.max(0, deadline - Date.now()));
    if (!result.completed) this.stop.abort();
    // The cut calls end at once; give them a moment to settle before their rows are released.
    await settleWithin([this.deliveries.onIdle()], 1_000);
    const released = await this.releaseHeld();
    const drained: DrainResult = { completed: result.completed, delivered: Math.min(running, result.delivered), lost: result.completed ? 0 : result.lost };
    this.logger.info({ queue: WEBHOOK_QUEUE_NAME, ...drained, released }, `webhook queue drained: ${released} deliveries left pending`);
    return drained;
  }

  private async releaseHeld(): Promise<number> {
    const byLease = new Map<string, string[]>();
    for (const [id, lease] of this.held) byLease.set(lease, [...(byLease.get(lease) ?? []), id]);
    let released = 0;
    for (const [lease, ids] of byLease) {
      try {
        await this.store.release(lease, ids);
        released += ids.length;
      } catch (error) {
        // Their leases expire on their own; another instance or the next start claims them then.
        this.logger.warn({ err: error, deliveries: ids.length }, 'could not release webhook deliveries at stop');
      }
    }
    this.held.clear();
    return released;
  }

  private onCommitted(events: readonly RecordedEvent[]): void {
    const seen = new Set<string>();
    const lookups: Promise<DeliveryWebhook[]>[] = [];
    let hooked = false;
    for (const event of events) {
      if (WEBHOOK_CHANGE_EVENTS.has(event.eventType)) this.hookLists.invalidate(event.membershipId);
      if (this.stopping || isResultEventType(event.eventType)) continue;
      // Known lists (most events: no hook) are answered at once, without a promise.
      const known = this.hookLists.knownFor(event.membershipId, event.eventType);
      if (known) {
        hooked ||= known.length > 0;
        continue;
      }
      const key = `${event.membershipId}\u0000${event.eventType}`;
      if (seen.has(key)) continue;
      seen.add(key);
      lookups.push(this.hookLists.activeFor(event.membershipId, event.eventType));
    }
    if (!lookups.length) {
      if (hooked) this.deliveriesWritten();
      return;
    }
    Promise.all(lookups).then(
      (lists) => {
        if (hooked || lists.some((list) => list.length > 0)) this.deliveriesWritten();
      },
      // The timer claims these deliveries anyway.
      (error: unknown) => this.logger.warn({ err: error }, 'could not look up webhooks for events'),
    );
  }

  /** Deliveries were written with events: claim them here, or tell the dispatching instances. */
  private deliveriesWritten(): void {
    if (this.config.webhookDispatch) this.wake();
    else this.announce();
  }

  /**
   * Tells the dispatching instances that deliveries were written (WEBHOOK_DISPATCH=off). Like
   * `wake`, at most one notification per CLAIM_GAP_MS: under load one wakes them for many commits.
   * A lost one costs a claim interval, never a delivery.
   */
  private announce(): void {
    if (this.stopping) return;
    if (this.announcing) {
      this.announceAgain = true;
      return;
    }
    this.announcing = true;
    void this.store
      .announceDue()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not announce webhook deliveries to the dispatching instances'))
      .then(() => new Promise((resolve) => setTimeout(resolve, CLAIM_GAP_MS)))
      .finally(() => {
        this.announcing = false;
        if (this.announceAgain && !this.stopping) {
          this.announceAgain = false;
          this.announce();
        }
      });
  }

  /**
   * Claims due deliveries now; a wake during a claim runs one more after it. Under load the next
   * claim starts CLAIM_GAP_MS after the previous one at the earliest, so one claim statement takes
   * the deliveries of many commits instead of one each; an idle instance claims at once.
   */
  private wake(): void {
    if (this.stopping) return;
    if (this.claiming) {
      this.wakeAgain = true;
      return;
    }
    const wait = this.lastClaimAt + CLAIM_GAP_MS - Date.now();
    this.claiming = (wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)) : Promise.resolve())
      .then(() => this.claimWhileDue())
      .finally(() => {
        this.claiming = undefined;
      });
  }

  private async claimWhileDue(): Promise<void> {
    do {
      this.wakeAgain = false;
      if (this.stopping) return;
      this.lastClaimAt = Date.now();
      const room = Math.min(
        this.deliveries.capacity - this.deliveries.depth + (WEBHOOK_QUEUE_CONCURRENCY - this.deliveries.inFlight),
        this.maxHeld - this.held.size,
      );
      const limit = Math.min(CLAIM_BATCH, room);
      if (limit <= 0) {
        this.moreDue = true;
        return;
      }
      const lease = newId();
      let claimed: ClaimedDelivery[];
      try {
        claimed = await this.store.claimDue(limit, lease, this.config.webhookLeaseSeconds);
      } catch (error) {
        this.logger.error({ err: error }, 'could not claim webhook deliveries');
        return;
      }
      for (const delivery of claimed) {
        // Already queued here under a lease that has run out: the queued item runs under the new one.
        const queuedHere = this.held.has(delivery.id);
        this.held.set(delivery.id, lease);
        if (!queuedHere) this.deliveries.enqueue(delivery);
      }
      this.moreDue = claimed.length === limit;
      if (this.moreDue) this.wakeAgain = true;
      if (this.wakeAgain) await new Promise((resolve) => setTimeout(resolve, Math.max(0, this.lastClaimAt + CLAIM_GAP_MS - Date.now())));
    } while (this.wakeAgain && !this.stopping);
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    // Stopping: a queued delivery is not started; it is released with the others.
    if (this.stopping) return;
    const lease = this.held.get(delivery.id);
    if (lease === undefined) return;
    try {
      await this.attemptHeld(delivery, lease);
    } finally {
      if (this.moreDue) this.wake();
    }
  }

  private async attemptHeld(claimed: ClaimedDelivery, lease: string): Promise<void> {
    const delivery = await this.current(claimed, lease);
    if (!delivery) {
      // Canceled, redelivered or claimed again while it waited: its row is someone else's now.
      this.attemptCounts.canceled++;
      this.held.delete(claimed.id);
      return;
    }
    const { event, webhook } = delivery;
    if (!event || !webhook || webhook.status !== 'active') {
      this.attemptCounts.canceled++;
      const why = !webhook ? 'The webhook was deleted' : !event ? 'The event is no longer stored' : 'The webhook is passive';
      await this.finish(delivery, lease, { status: 'canceled', attempts: delivery.attempts, nextAttemptAt: new Date(), lastStatus: null, lastError: why });
      return;
    }
    const deliveryWebhook: DeliveryWebhook = { id: delivery.webhookId, membershipId: delivery.membershipId, ...webhook };
    const deliveryEvent: DeliveryEvent = { id: delivery.eventId, membershipId: delivery.membershipId, ...event };
    const attempt = delivery.attempts + 1;
    const result = await attemptOnce(deliveryWebhook, deliveryEvent, attempt, this.deliveryContext(), delivery.id);
    // A call the stop cut is not an attempt: the row stays held and is released, pending.
    if (this.stop.signal.aborted && result.document.response === null && result.outcome === 'failure') return;
    this.attemptCounts[result.outcome]++;
    const tries = Math.max(1, Math.min(webhook.tryCount, 5));
    // A request that cannot be built or is refused fails the same way every time: no retry.
    const final = result.sent || result.outcome === 'not_sent' || result.outcome === 'blocked' || attempt >= tries;
    const nextAttemptAt = new Date(Date.now() + (final ? 0 : retryDelayMs(this.config.webhookRetryBaseMs, attempt)));
    // The result event and the delivery's new state are written side by side, each in its group
    // commit: the call slot waits for one round trip, not two. A crash between the two repeats the
    // attempt (at least once).
    await Promise.all([
      this.recordAttempt(deliveryWebhook, result),
      this.finish(delivery, lease, {
        status: result.sent ? 'succeeded' : final ? 'failed' : 'pending',
        attempts: attempt,
        nextAttemptAt,
        lastStatus: result.document.response?.status ?? null,
        lastError: result.document.error ?? null,
      }),
    ]);
    if (!final) this.wakeAt(nextAttemptAt.getTime());
  }

  /**
   * The claimed delivery with its webhook as it is now, when it waited in the queue (see
   * STALE_CLAIM_MS); undefined when the lease no longer holds its row. A failed read keeps the
   * claim's copy: the lease still bounds it, and a lost call would be worse than a late one.
   */
  private async current(delivery: ClaimedDelivery, lease: string): Promise<ClaimedDelivery | undefined> {
    if (Date.now() - delivery.claimedAt <= STALE_CLAIM_MS) return delivery;
    let webhook: ClaimedDelivery['webhook'] | undefined;
    try {
      webhook = await this.store.heldWebhook(delivery.membershipId, delivery.id, lease);
    } catch (error) {
      this.logger.warn({ err: error, deliveryId: delivery.id }, 'could not read a queued webhook delivery again; attempting it as claimed');
      return delivery;
    }
    return webhook === undefined ? undefined : { ...delivery, webhook };
  }

  private async finish(delivery: ClaimedDelivery, lease: string, outcome: AttemptOutcome): Promise<void> {
    try {
      await this.results.add({ id: delivery.id, membershipId: delivery.membershipId, leaseId: lease, outcome });
    } catch (error) {
      // The lease expires and the delivery is attempted again: at least once.
      this.logger.error({ err: error, deliveryId: delivery.id }, 'could not store a webhook delivery result');
    } finally {
      this.held.delete(delivery.id);
    }
  }

  /**
   * A retry this instance scheduled: claimed when due, not a claim interval later. The times wait
   * in order (at most MAX_RETRY_WAKES; past that the claim interval finds the rest) and one timer
   * runs for the earliest.
   */
  private wakeAt(at: number): void {
    if (this.stopping || this.retryWakes.length >= MAX_RETRY_WAKES) return;
    const index = this.retryWakes.findIndex((time) => time > at);
    this.retryWakes.splice(index < 0 ? this.retryWakes.length : index, 0, at);
    this.armRetryTimer();
  }

  private armRetryTimer(): void {
    const earliest = this.retryWakes[0];
    if (earliest === undefined || this.stopping || (this.retryTimer && this.retryTimer.at <= earliest)) return;
    if (this.retryTimer) clearTimeout(this.retryTimer.timer);
    const timer = setTimeout(() => {
      this.retryTimer = undefined;
      const now = Date.now();
      while (this.retryWakes.length && this.retryWakes[0] <= now) this.retryWakes.shift();
      this.wake();
      this.armRetryTimer();
    }, Math.max(0, earliest - Date.now()));
    timer.unref();
    this.retryTimer = { at: earliest, timer };
  }

  private deliveryContext(): DeliveryContext {
    return {
      timeoutMs: this.config.webhookTimeoutMs,
      stopSignal: this.stop.signal,
      nowSeconds: () => Math.floor(Date.now() / 1000),
      observeCall: (call) => this.observeCall(call),
      send: (call) => this.outbound.send(call),
    };
  }

  private async recordAttempt(webhook: DeliveryWebhook, result: AttemptResult): Promise<void> {
    if (result.outcome === 'blocked') {
      // A tenant aiming at an internal destination (or a missing OUTBOUND_ALLOW entry): the operator should know.
      this.logger.warn({ webhookId: webhook.id, membershipId: webhook.membershipId }, 'webhook call refused by the outbound destination policy');
    }
    try {
      await this.recorder.record({
        membershipId: webhook.membershipId,
        eventType: result.sent ? 'WebhookRequestSent' : 'WebhookRequestFailed',
        utilizerId: SYSTEM_UTILIZER,
        document: result.document,
      });
    } catch (error) {
      this.logger.error({ err: error, webhookId: webhook.id, attempt: result.document.attempt }, 'could not record a webhook result event');
    }
  }

  private observeCall(call: OutgoingCall): void {
    this.totals[call.outcome]++;
    this.totals.durationSecondsSum += call.durationSeconds;
    if (!this.observer) return;
    try {
      this.observer.observe(call);
    } catch {
      // Metrics must never break a delivery.
    }
  }
}
