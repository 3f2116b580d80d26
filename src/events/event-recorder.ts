import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Logger } from 'pino';
import type { EventRow } from '../database/schema';
import { newId } from '../common/ids';
import { LOGGER } from '../common/logger';
import { Batcher } from '../common/batcher';
import { RequestTransaction } from '../common/request-transaction';
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

/**
 * Mail-only values (contract "Shared rules"): secrets the subject user's mail carries, handed
 * beside the committed event to the listeners, in memory only. Never part of the event row.
 */
export type MailOnlyValues = Partial<
  Record<'reset_token' | 'reset_token_expires_in' | 'otp' | 'otp_expires_in' | 'activation_token' | 'activation_token_expires_in', string>
>;

export type RecordedEvent = EventRow;
/** Records an event in the transaction; `mailValues` go to the listeners beside it after the commit, never to the database. */
export type RecordEvent = (event: NewEvent, mailValues?: MailOnlyValues) => RecordedEvent;
/** `mailValues`: by event id, for the events recorded with some (a rolled-back transaction hands none). */
export type CommittedEventsListener = (events: readonly RecordedEvent[], mailValues: ReadonlyMap<string, MailOnlyValues>) => void;

const NO_MAIL_VALUES: ReadonlyMap<string, MailOnlyValues> = new Map();

/** The events recorded in the open request transaction, written just before it commits. */
const PENDING_EVENTS = Symbol('PENDING_EVENTS');

/** A request transaction's events, and the mail-only values of those recorded with some (memory only). */
interface PendingEvents {
  rows: RecordedEvent[];
  mailValues: Map<string, MailOnlyValues>;
}

/**
 * Every feature records events through this: the event is written in the same transaction as
 * the change, and listeners (the webhook dispatcher) hear of it only after the commit.
 *
 A service records a change's events in one way, `transaction(async (record) => ...)`. It
 * joins the request transaction that a controller's EventRecordingInterceptor opened, or opens
 * one when none is open (queue jobs, setup, sign-in, token routes). Repositories reach it without
 * being handed it, and the events go in one insert just before the commit. Three other entry points
 * serve events that are not part of a transaction's change: `record` (group commit, for events
 * that are the change themselves: delivery results), `recordRead` (events that record a read,
 * TokenVerified, written after the answer) and `prepare` + `publish` (the token routes' hot path, whose repository
 * writes the events in its own statement).
 */
@Injectable()
export class EventRecorder {
  private readonly listeners: CommittedEventsListener[] = [];

  constructor(
    private readonly repository: EventRepository,
    @Inject(LOGGER) private readonly logger: Logger,
    // Optional only for unit specs that build a recorder by hand: with none, there is never a request transaction.
    @Optional() private readonly requestTransaction?: RequestTransaction,
  ) {}

  onCommitted(listener: CommittedEventsListener): void {
    this.listeners.push(listener);
  }

  /**
   * An event of the change the current request transaction makes: written in that transaction
   * just before it commits, heard by listeners only after the commit, gone with a rollback.
   */
  private recordChange(event: NewEvent, mailValues?: MailOnlyValues): RecordedEvent {
    const row = toRow(event);
    const pending = this.pendingOfRequest();
    pending.rows.push(row);
    if (mailValues) pending.mailValues.set(row.id, mailValues);
    return row;
  }

  /**
   * Runs `work` in the request transaction, opening one when none is open: repositories join it
   * without being handed it (DATABASE's `db` is that transaction), and events recorded through
   * `record` are written just before it commits and heard by listeners only after.
   */
  async transaction<T>(work: (record: RecordEvent) => Promise<T>): Promise<T> {
    const requestTransaction = this.requireRequestTransaction();
    const inTransaction = () => work((event, values) => this.recordChange(event, values));
    return requestTransaction.active ? inTransaction() : requestTransaction.run(inTransaction);
  }

  /**
   * An event that is itself the change (webhook and mail results, a sign-in lock). Group commit:
   * the events recorded while one INSERT is on its way go together in the next one, and each
   * caller resumes only once its own event is stored. Under load one statement carries many
   * events; alone, an event is written at once.
   */
  async record(event: NewEvent): Promise<RecordedEvent> {
    const row = toRow(event);
    await this.groupCommit.add(row);
    this.publish([row]);
    return row;
  }

  /**
   * An event that records a read (TokenVerified): written after the answer, in batches of its
   * own that gather for READ_GATHER_MS and commit without waiting for the disk flush
   * (docs/api.md, "Events"). Resolves at once, so the caller answers without waiting for the
   * write; a write that fails is logged (the answer is already given). While more than
   * READ_BACKLOG of them wait, it resolves only once its own is stored: the caller waits, as every
   * verification once did, and memory stays bounded when the database writes slower than
   * verifications come. This instance's lists and `_query` wait for them (`settled`), and shutdown
   * writes them before the database closes; a `kill -9` of the instance may lose the last
   * READ_GATHER_MS of them.
   */
  recordRead(event: NewEvent): Promise<void> {
    const row = toRow(event);
    const written = this.readGroupCommit.add(row).then(() => this.publish([row]));
    if (this.readGroupCommit.unwritten > READ_BACKLOG) return written;
    written.catch((error: unknown) =>
      this.logger.error({ err: error, event_type: row.eventType, membership_id: row.membershipId, event_id: row.id }, 'a read event was not recorded'),
    );
    return Promise.resolve();
  }

  /**
   * Resolves once every event handed to `record` or `recordRead` before this call is written (or
   * its write has failed). Events written after the call are not waited for, so a steady stream
   * of verifications cannot hold the shutdown drains up.
   */
  settled(): Promise<void> {
    // Every list and _query asks first (read-your-writes): when nothing is pending, no promise chain.
    if (this.groupCommit.idle && this.readGroupCommit.idle) return Promise.resolve();
    return Promise.all([this.groupCommit.settled(), this.readGroupCommit.settled()]).then(() => undefined);
  }

  /** Shutdown: the events of requests still in flight are written before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    await this.settled();
  }

  private requireRequestTransaction(): RequestTransaction {
    if (!this.requestTransaction) throw new Error('recording a change needs a request transaction (RequestTransaction)');
    return this.requestTransaction;
  }

  private pendingOfRequest(): PendingEvents {
    const transaction = this.requireRequestTransaction();
    return transaction.state(PENDING_EVENTS, () => {
      const pending: PendingEvents = { rows: [], mailValues: new Map() };
      transaction.beforeCommit((tx) => this.repository.insert(tx, pending.rows));
      transaction.afterCommit(() => this.publish(pending.rows, pending.mailValues));
      return pending;
    });
  }

  private readonly groupCommit = new Batcher<RecordedEvent>((rows) => this.repository.insertBatch(rows));
  private readonly readGroupCommit = new Batcher<RecordedEvent>((rows) => this.repository.insertReadBatch(rows), READ_GATHER_MS);

  /**
   * Rows (ids, sanitized documents, times) for events that a repository writes itself, in the
   * same statement or transaction as its change. Call `publish` with them after the commit.
   */
  prepare(events: readonly NewEvent[]): RecordedEvent[] {
    return events.map(toRow);
  }

  /** Hands committed events to the listeners (the webhook dispatcher). Only after the commit. */
  publish(recorded: readonly RecordedEvent[], mailValues: ReadonlyMap<string, MailOnlyValues> = NO_MAIL_VALUES): void {
    if (!recorded.length) return;
    for (const listener of this.listeners) {
      try {
        listener(recorded, mailValues);
      } catch (error) {
        // A listener must never fail the request whose change already committed.
        this.logger.error({ err: error }, 'event listener failed');
      }
    }
  }
}

/**
 * How long a write of read events waits for more to share it. Verify-token Bearer, builds
 * alternating (2026-12-02, 5 pairs): with the answer waiting for its event's commit, PostgreSQL
 * took 1.57-1.96× the floor app's time per request and the route made 79-93% of its floor; with
 * the answer first and this wait, 1.37-1.49× and 90-105%. The wait makes the batches: answered
 * at once, the client's next request comes while the write gathers.
 */
const READ_GATHER_MS = 5;

/**
 * Read events waiting for their write past which a verification waits for its own: about a
 * second of verifications at full speed on one instance, a few hundred kilobytes of rows.
 */
export const READ_BACKLOG = 2000;

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
