import type { Logger } from 'pino';
import { BoundedCache } from '../common/bounded-cache';
import type { BoundedQueue, DrainResult } from './bounded-queue';
import { settleWithin } from './settle-within';

/*
 * The pieces the webhook and mail dispatchers share: both look up a membership's active hooks
 * for each committed event, queue one item per hook (or recipient), and drain the same way on
 * shutdown. One home here keeps the two from drifting apart (issue 14, "one home for each shared
 * rule"); what differs (the rows, the items, the delivery) stays in each dispatcher.
 */

/** What the shared pieces read of an event: whose it is and what happened. */
export interface TriggeringEvent {
  membershipId: string;
  eventType: string;
}

interface CachedHookList<T> {
  expiresAt: number;
  hooks: Promise<T[]>;
  /** The list once the lookup has answered. */
  settled?: readonly T[];
}

/**
 * A membership's active hooks per event type, trusted for `ttlMs`. Most events have no hook, and
 * asking the database for every event would double the writes' cost. The promise is cached, so a
 * burst of events of one type costs one query; a failed query is forgotten so the next event asks
 * again. Bounded and swept like every cache: an entry also expires with its membership's entry.
 */
export interface HookListCacheOptions<T> {
  maxEntries: number;
  ttlMs: number;
  findActiveFor: (membershipId: string, eventType: string) => Promise<T[]>;
}

export class HookListCache<T> {
  private readonly byMembership: BoundedCache<Map<string, CachedHookList<T>>>;

  constructor(private readonly options: HookListCacheOptions<T>) {
    this.byMembership = new BoundedCache({ maxEntries: options.maxEntries, ttlMs: options.ttlMs });
  }

  activeFor(membershipId: string, eventType: string): Promise<T[]> {
    const now = Date.now();
    let byType = this.byMembership.get(membershipId);
    const cached = byType?.get(eventType);
    if (cached && cached.expiresAt > now) return cached.hooks;
    if (!byType) {
      byType = new Map();
      this.byMembership.set(membershipId, byType);
    }
    const hooks = this.options.findActiveFor(membershipId, eventType);
    const entry: CachedHookList<T> = { expiresAt: now + this.options.ttlMs, hooks };
    byType.set(eventType, entry);
    hooks.then(
      (list) => {
        entry.settled = list;
      },
      () => {
        if (byType.get(eventType) === entry) byType.delete(eventType);
      },
    );
    return hooks;
  }

  /**
   * The list `activeFor` would answer, when it is cached and its lookup has answered; undefined
   * otherwise. Most events have no hook and come in a stream (every verification is one): asked
   * this first, they cost no promise at all.
   */
  knownFor(membershipId: string, eventType: string): readonly T[] | undefined {
    const cached = this.byMembership.get(membershipId)?.get(eventType);
    return cached && cached.expiresAt > Date.now() ? cached.settled : undefined;
  }

  /** Forgets this instance's cached hook lists of a membership. */
  invalidate(membershipId: string): void {
    this.byMembership.delete(membershipId);
  }

  close(): void {
    this.byMembership.close();
  }
}

/**
 * Hook lookups started after a commit and not yet finished: a drain waits for them, since each
 * may still add items to the queue, and counts those it could not wait for as lost.
 */
export class PendingLookups {
  private readonly pending = new Set<Promise<void>>();

  /** Tracks `lookup` until it settles; a failure goes to `onError` and never escapes. */
  track(lookup: Promise<void>, onError: (error: unknown) => void): void {
    const tracked: Promise<void> = lookup.catch(onError).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  /** Waits for the lookups until `deadline` (epoch ms); answers how many are still running. */
  async settleBy(deadline: number): Promise<number> {
    if (this.pending.size) await settleWithin([...this.pending], deadline - Date.now());
    return this.pending.size;
  }
}

export interface EventTriggeredDrain<T> {
  timeoutMs: number;
  /** Events still being written (some are written after their answer): their hooks run like the others. */
  eventsSettled: () => Promise<unknown>;
  /** Called once those writes are in: later commits add nothing to the queue. */
  stopAccepting: () => void;
  lookups: PendingLookups;
  queue: BoundedQueue<T>;
  queueName: string;
  /** Names the items in the log line, e.g. "webhook" or "mail". */
  label: string;
  logger: Logger;
}

/**
 * The shutdown drain of an event-triggered queue: takes the events still being written, stops
 * taking new ones, waits for the lookups that may still queue items, then drains the queue, all
 * within `timeoutMs`. Lookups still running at the deadline count as lost with the waiting items.
 */
export async function drainEventTriggeredQueue<T>(drain: EventTriggeredDrain<T>): Promise<DrainResult> {
  const deadline = Date.now() + Math.max(0, drain.timeoutMs);
  await settleWithin([drain.eventsSettled()], drain.timeoutMs);
  drain.stopAccepting();
  const unfinishedLookups = await drain.lookups.settleBy(deadline);
  const queued = await drain.queue.drain(Math.max(0, deadline - Date.now()));
  const result: DrainResult = {
    completed: queued.completed && unfinishedLookups === 0,
    delivered: queued.delivered,
    lost: queued.lost + unfinishedLookups,
  };
  const log = result.lost ? drain.logger.warn.bind(drain.logger) : drain.logger.info.bind(drain.logger);
  log({ queue: drain.queueName, ...result }, `${drain.label} queue drained: ${result.delivered} delivered, ${result.lost} lost`);
  return result;
}

export interface EventTriggerOptions<T, Item> {
  hookLists: HookListCacheOptions<T>;
  /** Event types that change the hooks: each forgets its membership's cached lists on this instance at once. */
  hookChangeEvents: ReadonlySet<string>;
  /** Whether an event type may trigger hooks (result events never do: each call would trigger the next). */
  triggers: (eventType: string) => boolean;
  /** The log line of a failed lookup, e.g. "could not look up webhooks for events". */
  lookupFailure: string;
  drain: Omit<EventTriggeredDrain<Item>, 'timeoutMs' | 'stopAccepting' | 'lookups'>;
}

/**
 * The intake of an event-triggered queue, the same for webhooks and mail hooks: after each commit
 * it forgets the hook lists the events changed, then (until a drain begins) looks up the hooks of
 * the triggering events off the request's path and lets the dispatcher queue its items. A failed
 * lookup is logged with the event types only.
 */
export class EventTrigger<T, Item> {
  readonly hookLists: HookListCache<T>;
  private readonly lookups = new PendingLookups();
  private accepting = true;
  private draining?: Promise<DrainResult>;

  constructor(private readonly options: EventTriggerOptions<T, Item>) {
    this.hookLists = new HookListCache(options.hookLists);
  }

  /** `enqueue` queues the items of the triggering events (never none, never after a drain began). */
  onCommitted<E extends TriggeringEvent>(events: readonly E[], enqueue: (triggering: E[]) => Promise<void>): void {
    for (const event of events) {
      if (this.options.hookChangeEvents.has(event.eventType)) this.hookLists.invalidate(event.membershipId);
    }
    if (!this.accepting) return;
    // Events known to have no hook are done here; the others are looked up off the request's path.
    const triggering = events.filter(
      (event) => this.options.triggers(event.eventType) && this.hookLists.knownFor(event.membershipId, event.eventType)?.length !== 0,
    );
    if (!triggering.length) return;
    this.lookups.track(enqueue(triggering), (error) => {
      this.options.drain.logger.error({ err: error, eventTypes: [...new Set(triggering.map((e) => e.eventType))] }, this.options.lookupFailure);
    });
  }

  /** drainEventTriggeredQueue, once: later calls answer the first drain's result. */
  drain(timeoutMs: number): Promise<DrainResult> {
    this.draining ??= drainEventTriggeredQueue({
      ...this.options.drain,
      timeoutMs,
      stopAccepting: () => {
        this.accepting = false;
      },
      lookups: this.lookups,
    });
    return this.draining;
  }

  /** Stops the hook-list cache's sweep (after the drain, at shutdown). */
  close(): void {
    this.hookLists.close();
  }
}
