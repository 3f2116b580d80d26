import { Injectable } from '@nestjs/common';
import type { BoundedQueue } from './bounded-queue';

/** What metrics read from one queue; all numbers are read live from the queue. */
export interface QueueStats {
  name: string;
  capacity: number;
  /** Items waiting. */
  depth: number;
  /** Items being worked on. */
  inFlight: number;
  /** Items dropped because the queue was full, since start. */
  dropped: number;
  /** Items finished (success or failure), since start. */
  processed: number;
  closed: boolean;
}

/** A queue whose items live in the database (durable webhook deliveries): what metrics read of it. */
export interface DurableQueueStats {
  name: string;
  /** Items waiting in the database (every instance's), and the age of the oldest in seconds (0 when none). */
  backlog: () => Promise<{ pending: number; oldestAgeSeconds: number }>;
  /** Attempts this instance made since start, by outcome (a copy). */
  attempts: () => Record<string, number>;
}

/**
 * Every bounded queue of this instance, by name (webhooks now; mail later). Metrics read
 * `list()` or `stats()` at scrape time; owners `register` their queue once when they create it.
 */
@Injectable()
export class QueueRegistry {
  private readonly queues = new Map<string, BoundedQueue<unknown>>();
  private readonly durable = new Map<string, DurableQueueStats>();

  register<T>(queue: BoundedQueue<T>): void {
    if (this.queues.has(queue.name)) throw new Error(`A queue named ${queue.name} is already registered`);
    // The registry only reads the queue's counters, which do not depend on T.
    this.queues.set(queue.name, queue as unknown as BoundedQueue<unknown>);
  }

  /** A queue that keeps its items in the database; metrics read its backlog at scrape time. */
  registerDurable(stats: DurableQueueStats): void {
    if (this.durable.has(stats.name)) throw new Error(`A durable queue named ${stats.name} is already registered`);
    this.durable.set(stats.name, stats);
  }

  listDurable(): readonly DurableQueueStats[] {
    return [...this.durable.values()];
  }

  get(name: string): BoundedQueue<unknown> | undefined {
    return this.queues.get(name);
  }

  list(): readonly BoundedQueue<unknown>[] {
    return [...this.queues.values()];
  }

  stats(): QueueStats[] {
    return this.list().map((queue) => ({
      name: queue.name,
      capacity: queue.capacity,
      depth: queue.depth,
      inFlight: queue.inFlight,
      dropped: queue.dropped,
      processed: queue.processed,
      closed: queue.isClosed,
    }));
  }
}
