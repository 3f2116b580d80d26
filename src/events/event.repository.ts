import { Inject, Injectable } from '@nestjs/common';
import { and, desc, eq, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { DATABASE, type Database, type Executor, UNFLUSHED_COMMIT } from '../database/database';
import { deliveries, events, webhooks, type EventRow } from '../database/schema';
import { ListStatements, querySchema, runListQuery, type ListPage, type ListQuery, type ListRequest } from '../common/query';
import { readEventRow, toEventResponse } from './event.mapper';

/**
 * What `where`, `sort` and `select` may name. Sortable fields are those an index serves inside
 * one membership: (membership_id, event_time, id), (membership_id, event_type, event_time, id) and
 * (membership_id, utilizer_id, event_time).
 */
export const EVENT_QUERY_SCHEMA = querySchema(events, ['id', 'eventType', 'utilizerId', 'eventTime', 'membershipId', 'document', 'prior'], {
  sortable: ['eventType', 'utilizerId', 'eventTime'],
});

/** Newest first; the id breaks ties so that pages never overlap (a backward scan of events_membership_time). */
export const EVENT_DEFAULT_SORT: SQL = sql`${desc(events.eventTime)}, ${desc(events.id)}`;

/** The default order by output column names, for sorting a union of per-value queries. */
const EVENT_RESULT_ORDER: SQL = sql`${sql.identifier('event_time')} desc, ${sql.identifier('id')} desc`;

export const eventScope = (membershipId: string): SQL => eq(events.membershipId, membershipId);

/**
 * Event rows as one `select` over one JSON parameter (`eventsJson`, from `eventRecords`): the
 * statement text is the same for any number of events, so it can be prepared once. Drizzle lists
 * an insert's columns in the table's order; the record's columns follow that order.
 *
 * One JSON text rather than seven array parameters: pg escapes every element of a text array
 * (two `replace` passes over each serialized document, about 11 KB of garbage per refresh), and
 * each document was serialized on its own first. A JSON null becomes SQL NULL (prior).
 */
export const eventsFrom = (json: SQLWrapper | string): SQL => sql`select id, membership_id, event_type, utilizer_id, document, prior, event_time
  from jsonb_to_recordset(${json}::jsonb)
    as e(id text, membership_id text, event_type text, utilizer_id text, document jsonb, prior jsonb, event_time timestamptz)`;

/**
 * The webhook deliveries the events `source` lists owe (contract "Durable webhook delivery"): one
 * pending row per active webhook on each event's type, due at once. A data-modifying CTE of every
 * statement that writes events, so an event and its deliveries commit together, and an event with
 * no webhook costs one probe of webhooks_membership_event. Result events never match: no webhook
 * may name them. `source` is a select with the columns of `eventsFrom`.
 *
 * The probe is a lateral subquery behind `offset 0`, which the planner cannot flatten into a join:
 * as a plain join, the planner took the JSON's rows for 100 (its guess for any set-returning
 * function) and hashed every active webhook of every membership for each statement, a scan of
 * the whole table on every event written (3.4 ms with 20,000 webhooks).
 */
export function deliveriesOf(source: SQL): SQL {
  return sql`insert into ${deliveries} (id, membership_id, webhook_id, event_id, status, next_attempt_at)
    select gen_random_uuid()::text, w.membership_id, w.id, e.id, 'pending', now()
    from (${source}) e
    cross join lateral (
      select hook.id, hook.membership_id from ${webhooks} hook
      where hook.membership_id = e.membership_id and hook.event = e.event_type and hook.status = 'active'
      offset 0
    ) w`;
}

/**
 * The two CTEs of a statement that writes events from one JSON text (`json`: a value, or the
 * `eventsJson` placeholder of a prepared statement): `new_events`, the rows of `eventsFrom` (only
 * while `condition` holds), and `queued`, the webhook deliveries they owe. The events insert
 * selects `rows`: the deliveries and the events both read `new_events`, so the JSON is sent and
 * parsed once per statement (it was twice: about 36 µs of the server's time for a refresh's two
 * events with their user documents).
 */
export function eventWrites(db: Executor, json: SQLWrapper | string = sql.placeholder('eventsJson'), condition?: SQL) {
  const source = db
    .$with('new_events', { id: sql<string>`id` })
    .as(condition ? sql`${eventsFrom(json)} where ${condition}` : eventsFrom(json));
  // The columns of `eventsFrom`, in its order: the events insert's.
  const rows = sql`select * from ${source}`;
  const queued = db.$with('queued', { id: sql<string>`id` }).as(sql`${deliveriesOf(rows)} returning id`);
  return { source, queued, rows };
}

/** The value of the `eventsJson` placeholder of `eventWrites`. */
export function eventRecords(rows: readonly EventRow[]): { eventsJson: string } {
  return {
    eventsJson: JSON.stringify(
      rows.map((row) => ({
        id: row.id,
        membership_id: row.membershipId,
        event_type: row.eventType,
        utilizer_id: row.utilizerId,
        document: row.document,
        prior: row.prior,
        event_time: row.eventTime.toISOString(),
      })),
    ),
  };
}

/**
 * Any number of events in ONE statement whose text never changes. It is parsed and planned once
 * per connection, where a multi-row VALUES insert is a new statement for every batch size (group
 * commit writes batches of every size) with seven parameters per row.
 */
function prepareBatchInsert(db: Database['db'], commit: 'flushed' | 'unflushed') {
  const { source, queued, rows } = eventWrites(db, sql.placeholder('eventsJson'), commit === 'unflushed' ? UNFLUSHED_COMMIT : undefined);
  return db.with(source, queued).insert(events).select(rows).prepare(commit === 'unflushed' ? 'insert_read_events' : 'insert_events');
}

/** The events list of a membership, for runListQuery (and for explaining its plans). */
export function eventListQuery(executor: Executor, membershipId: string, request: ListRequest, statements?: ListStatements): ListQuery<EventRow> {
  return {
    statements,
    executor,
    table: events,
    scope: eventScope(membershipId),
    schema: EVENT_QUERY_SCHEMA,
    request,
    defaultSort: EVENT_DEFAULT_SORT,
    toResponse: toEventResponse,
    readRow: readEventRow,
    idColumn: events.id,
    // events_membership_type_time serves one type at a time in the default order.
    inByIndex: { field: 'event_type', resultOrder: EVENT_RESULT_ORDER },
  };
}

@Injectable()
export class EventRepository {
  private readonly batchInsert: ReturnType<typeof prepareBatchInsert>;
  private readonly readBatchInsert: ReturnType<typeof prepareBatchInsert>;
  /** The list and `_query` statements by query shape: the event log is read with a few shapes, often. */
  private readonly listStatements: ListStatements;

  constructor(@Inject(DATABASE) private readonly database: Database) {
    this.batchInsert = prepareBatchInsert(database.db, 'flushed');
    this.readBatchInsert = prepareBatchInsert(database.db, 'unflushed');
    this.listStatements = new ListStatements(database.db);
  }

  /** Events on their own (not part of another change): one prepared statement for the whole batch. */
  async insertBatch(rows: readonly EventRow[]): Promise<void> {
    if (!rows.length) return;
    await this.batchInsert.execute(eventRecords(rows));
  }

  /**
   * Events that record a read (TokenVerified), as `insertBatch` but committed without waiting for
   * the disk flush (UNFLUSHED_COMMIT): visible to every reader and instance when this resolves; a
   * crash of the database server, not of an instance, may lose the last fraction of a second of them.
   */
  async insertReadBatch(rows: readonly EventRow[]): Promise<void> {
    if (!rows.length) return;
    await this.readBatchInsert.execute(eventRecords(rows));
  }

  /** Events of a change, in the change's transaction, with the webhook deliveries they owe. */
  async insert(executor: Executor, rows: EventRow[]): Promise<void> {
    if (!rows.length) return;
    const writes = eventWrites(executor, eventRecords(rows).eventsJson);
    await executor.with(writes.source, writes.queued).insert(events).select(writes.rows);
  }

  get db(): Executor {
    return this.database.db;
  }

  async findById(membershipId: string, id: string): Promise<EventRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(events)
      .where(and(eventScope(membershipId), eq(events.id, id)))
      .limit(1);
    return row;
  }

  /** List and `_query`: filters, sort, paging and projection of the contract, inside the membership. */
  list(membershipId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery(eventListQuery(this.database.db, membershipId, request, this.listStatements));
  }
}

