import { type BeforeApplicationShutdown, Inject, Injectable, Optional } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { LOGGER } from '../common/logger';
import type { WebhookRow } from '../database/schema';
import { EventRecorder, type RecordedEvent } from '../events/event-recorder';
import { isResultEventType, SYSTEM_UTILIZER } from '../events/event-types';
import { BoundedQueue, type DrainResult } from '../queue/bounded-queue';
import { EventTrigger } from '../queue/event-triggered-delivery';
import { QueueRegistry } from '../queue/queue-registry';
import type { DeliveryEvent, DeliveryWebhook } from './delivery-request';
import { OutboundHttp } from '../outbound/outbound.module';
import { OUTGOING_CALL_OBSERVER, type OutgoingCall, type OutgoingCallObserver, type OutgoingCallTotals } from '../outbound/outgoing-calls';
import { type AttemptResult, deliverWebhook } from './webhook-delivery';
import { WebhookRepository } from './webhook.repository';

/** Limits of the specification: 10,000 waiting calls, 8 in parallel. */
export const WEBHOOK_QUEUE_NAME = 'webhooks';
export const WEBHOOK_QUEUE_CAPACITY = 10_000;
export const WEBHOOK_QUEUE_CONCURRENCY = 8;
/**
 * How long this instance trusts its list of a membership's active webhooks for one event type.
 * Most events have no webhook, and asking the database for every event would double the writes'
 * cost. Changes made on this instance clear the entry at once (the Webhook* events themselves do
 * it); other instances see a change within this time.
 */
export const WEBHOOK_LOOKUP_TTL_MS = 5_000;
const WEBHOOK_CHANGE_EVENTS = new Set(['WebhookCreated', 'WebhookUpdated', 'WebhookDeleted']);

export interface DeliveryItem {
  webhook: DeliveryWebhook;
  event: DeliveryEvent;
}

function toDeliveryWebhook(row: WebhookRow): DeliveryWebhook {
  return { id: row.id, membershipId: row.membershipId, tryCount: row.tryCount, request: row.request, secret: row.secret };
}

function toDeliveryEvent(event: RecordedEvent): DeliveryEvent {
  return {
    id: event.id,
    membershipId: event.membershipId,
    eventType: event.eventType,
    utilizerId: event.utilizerId,
    document: event.document,
    prior: event.prior ?? null,
    eventTime: event.eventTime,
  };
}

/**
 * Calls webhooks after the events that trigger them have committed (spec "Webhook delivery").
 * The request that caused an event never waits for this: the lookup runs after the commit, off
 * the request's path, and calls wait in a bounded in-memory queue. A full queue drops the call
 * (logged with the webhook id); a shutdown drains the queue for `shutdownDrainMs`.
 */
@Injectable()
export class WebhookDispatcher implements BeforeApplicationShutdown {
  private readonly deliveries: BoundedQueue<DeliveryItem>;
  /** Aborted when the drain deadline passes: calls still running end at once. */
  private readonly stop = new AbortController();
  /** Webhook lists per membership, then per event type, for at most WEBHOOK_LOOKUP_TTL_MS. */
  private readonly trigger: EventTrigger<DeliveryWebhook, DeliveryItem>;
  private readonly totals: OutgoingCallTotals = { success: 0, failure: 0, timeout: 0, durationSecondsSum: 0 };

  constructor(
    private readonly recorder: EventRecorder,
    private readonly webhooks: WebhookRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: QueueRegistry,
    private readonly outbound: OutboundHttp,
    @Optional() @Inject(OUTGOING_CALL_OBSERVER) private readonly observer?: OutgoingCallObserver,
  ) {
    this.deliveries = new BoundedQueue<DeliveryItem>({
      name: WEBHOOK_QUEUE_NAME,
      capacity: WEBHOOK_QUEUE_CAPACITY,
      concurrency: WEBHOOK_QUEUE_CONCURRENCY,
      worker: (item) => this.deliver(item),
      onDrop: (item) =>
        this.logger.warn(
          { webhookId: item.webhook.id, membershipId: item.webhook.membershipId, eventType: item.event.eventType, eventId: item.event.id },
          'webhook queue is full; the call was dropped',
        ),
      onError: (error, item) => this.logger.error({ err: error, webhookId: item.webhook.id }, 'webhook delivery failed unexpectedly'),
    });
    registry.register(this.deliveries);
    this.trigger = new EventTrigger({
      hookLists: {
        maxEntries: config.cacheMaxEntries,
        ttlMs: WEBHOOK_LOOKUP_TTL_MS,
        findActiveFor: (membershipId, eventType) => this.webhooks.findActiveFor(membershipId, eventType).then((rows) => rows.map(toDeliveryWebhook)),
      },
      hookChangeEvents: WEBHOOK_CHANGE_EVENTS,
      triggers: (eventType) => !isResultEventType(eventType),
      lookupFailure: 'could not look up webhooks for events',
      drain: {
        // TokenVerified is written after its answer: its webhooks are called like the others.
        eventsSettled: () => this.recorder.settled(),
        queue: this.deliveries,
        queueName: WEBHOOK_QUEUE_NAME,
        label: 'webhook',
        logger: this.logger,
      },
    });
    recorder.onCommitted((events) => this.onCommitted(events));
  }

  /** The webhook call queue (depth, inFlight, dropped, processed, capacity); also in QueueRegistry. */
  get queue(): BoundedQueue<DeliveryItem> {
    return this.deliveries;
  }

  /** Outgoing webhook calls since start, per outcome (a copy). */
  outgoingCallTotals(): OutgoingCallTotals {
    return { ...this.totals };
  }

  /** Forgets this instance's cached webhook lists of a membership. */
  invalidate(membershipId: string): void {
    this.trigger.hookLists.invalidate(membershipId);
  }

  /**
   * Takes the events still being written, stops taking new ones, then waits until every queued
   * and running call has finished or `timeoutMs` has passed; calls still running then are
   * cancelled and counted as lost with the waiting ones. Idempotent: later calls answer the first
   * drain's result.
   */
  async drain(timeoutMs: number): Promise<DrainResult> {
    const result = await this.trigger.drain(timeoutMs);
    // Calls still running past the deadline end at once.
    if (!result.completed) this.stop.abort();
    return result;
  }

  /**
   * Before the database closes (that happens in onApplicationShutdown), so that the calls still
   * queued can record their result events.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.drain(this.config.shutdownDrainMs);
    this.trigger.close();
  }

  private onCommitted(events: readonly RecordedEvent[]): void {
    this.trigger.onCommitted(events, (triggering) => this.enqueueCalls(triggering));
  }

  private async enqueueCalls(events: readonly RecordedEvent[]): Promise<void> {
    for (const event of events) {
      const webhooks = await this.trigger.hookLists.activeFor(event.membershipId, event.eventType);
      if (!webhooks.length) continue;
      const deliveryEvent = toDeliveryEvent(event);
      for (const webhook of webhooks) this.deliveries.enqueue({ webhook, event: deliveryEvent });
    }
  }

  private async deliver(item: DeliveryItem): Promise<void> {
    await deliverWebhook(item.webhook, item.event, {
      timeoutMs: this.config.webhookTimeoutMs,
      stopSignal: this.stop.signal,
      nowSeconds: () => Math.floor(Date.now() / 1000),
      recordAttempt: (webhook, result) => this.recordAttempt(webhook, result),
      observeCall: (call) => this.observeCall(call),
      send: (call) => this.outbound.send(call),
    });
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
