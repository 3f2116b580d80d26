import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { DATABASE, type Database, type Tx } from '../database/database';
import type { EventRow } from '../database/schema';
import { newId } from '../common/ids';
import { LOGGER } from '../common/logger';
import { EventRepository } from './event.repository';
import { SYSTEM_UTILIZER, type EventType } from './event-types';
import { sanitizeDocument } from './sanitize';

export interface NewEvent {
  membershipId: string;
  eventType: EventType;
  /** Caller id, or `system`. */
  utilizerId: string;
  document: object;
  prior?: object | null;
}

export type RecordedEvent = EventRow;
export type RecordEvent = (event: NewEvent) => RecordedEvent;
export type CommittedEventsListener = (events: readonly RecordedEvent[]) => void;

/**
 * Every feature records events through this: the event is written in the same transaction as
 * the change, and listeners (the webhook dispatcher) hear of it only after the commit.
 */
@Injectable()
export class EventRecorder {
  private readonly listeners: CommittedEventsListener[] = [];

  constructor(
    @Inject(DATABASE) private readonly database: Database,
    private readonly repository: EventRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onCommitted(listener: CommittedEventsListener): void {
    this.listeners.push(listener);
  }

  /** Runs `work` in a transaction; events recorded through `record` are written before the commit. */
  async transaction<T>(work: (tx: Tx, record: RecordEvent) => Promise<T>): Promise<T> {
    const pending: RecordedEvent[] = [];
    const record: RecordEvent = (event) => {
      const row = toRow(event);
      pending.push(row);
      return row;
    };
    const result = await this.database.db.transaction(async (tx) => {
      const value = await work(tx, record);
      await this.repository.insert(tx, pending);
      return value;
    });
    this.publish(pending);
    return result;
  }

  /**
   * An event that is itself the change (TokenVerified, webhook results). Group commit: the events
   * recorded while one INSERT is on its way go together in the next one, and each caller resumes
   * only once its own event is stored. Under load one statement carries many events; alone, an
   * event is written at once.
   */
  async record(event: NewEvent): Promise<RecordedEvent> {
    const row = toRow(event);
    await this.groupCommit.add(row);
    this.publish([row]);
    return row;
  }

  private readonly groupCommit = new GroupCommit<RecordedEvent>((rows) => this.repository.insertBatch(rows));

  /**
   * Rows (ids, sanitized documents, times) for events that a repository writes itself, in the
   * same statement or transaction as its change. Call `publish` with them after the commit.
   */
  prepare(events: readonly NewEvent[]): RecordedEvent[] {
    return events.map(toRow);
  }

  /** Hands committed events to the listeners (the webhook dispatcher). Only after the commit. */
  publish(recorded: readonly RecordedEvent[]): void {
    if (!recorded.length) return;
    for (const listener of this.listeners) {
      try {
        listener(recorded);
      } catch (error) {
        // A listener must never fail the request whose change already committed.
        this.logger.error({ err: error }, 'event listener failed');
      }
    }
  }
}

/** Batches items into one write while the previous write is in flight; at most 500 per write. */
class GroupCommit<T> {
  private waiting: { item: T; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private writing = false;

  constructor(private readonly write: (items: T[]) => Promise<void>) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.writing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.writing = true;
    while (this.waiting.length) {
      const batch = this.waiting.splice(0, 500);
      try {
        await this.write(batch.map((entry) => entry.item));
        for (const entry of batch) entry.resolve();
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.writing = false;
  }
}

function toRow(event: NewEvent): RecordedEvent {
  return {
    id: newId(),
    membershipId: event.membershipId,
    eventType: event.eventType,
    // An event always names who caused it; a change without a caller is the service's own.
    utilizerId: event.utilizerId || SYSTEM_UTILIZER,
    document: sanitizeDocument(event.document) as Record<string, unknown>,
    prior: event.prior ? (sanitizeDocument(event.prior) as Record<string, unknown>) : null,
    eventTime: new Date(),
  };
}
