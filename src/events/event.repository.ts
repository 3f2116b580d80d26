import { Inject, Injectable } from '@nestjs/common';
import { and, desc, eq, sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { events, type EventRow } from '../database/schema';
import { runListQuery, type ListPage, type ListRequest, type QuerySchema } from '../common/query';
import { toEventResponse } from './event.mapper';

/**
 * What `where`, `sort` and `select` may name. Sortable fields are those an index serves inside
 * one membership: (membership_id, event_time, id), (membership_id, event_type, event_time) and
 * (membership_id, utilizer_id, event_time).
 */
export const EVENT_QUERY_SCHEMA: QuerySchema = {
  fields: {
    _id: { sql: sql`${events.id}`, type: 'string' },
    event_type: { sql: sql`${events.eventType}`, type: 'string', sortable: true },
    utilizer_id: { sql: sql`${events.utilizerId}`, type: 'string', sortable: true },
    event_time: { sql: sql`${events.eventTime}`, type: 'timestamp', sortable: true },
    membership_id: { sql: sql`${events.membershipId}`, type: 'string' },
    document: { sql: sql`${events.document}`, type: 'json' },
    prior: { sql: sql`${events.prior}`, type: 'json' },
  },
};

/** Newest first; the id breaks ties so that pages never overlap (a backward scan of events_membership_time). */
export const EVENT_DEFAULT_SORT: SQL = sql`${desc(events.eventTime)}, ${desc(events.id)}`;

export const eventScope = (membershipId: string): SQL => eq(events.membershipId, membershipId);

/**
 * An INSERT of prepared event rows (EventRecorder.prepare) for use inside a larger statement, e.g.
 * a data-modifying CTE: `with created as (insert ... returning id), logged as (${eventInsertFrom(rows, sql`created`)}) ...`.
 * The rows are written only when `source` (a CTE or table name) has at least one row, so the
 * events exist exactly when the change they describe does. Every value is a bound parameter.
 */
export function eventInsertFrom(rows: readonly EventRow[], source: SQL): SQL {
  if (!rows.length) return sql`select 1 where false`;
  const values = rows.map(
    (row) =>
      sql`(${row.id}::text, ${row.membershipId}::text, ${row.eventType}::text, ${row.utilizerId}::text, ${JSON.stringify(row.document)}::jsonb, ${row.prior === null ? null : JSON.stringify(row.prior)}::jsonb, ${row.eventTime.toISOString()}::timestamptz)`,
  );
  return sql`insert into ${events} (id, membership_id, event_type, utilizer_id, document, prior, event_time)
    select v.id, v.membership_id, v.event_type, v.utilizer_id, v.document, v.prior, v.event_time
    from (values ${sql.join(values, sql`, `)}) as v(id, membership_id, event_type, utilizer_id, document, prior, event_time)
    where exists (select 1 from ${source})`;
}

/**
 * Any number of events in ONE statement whose text never changes: seven arrays, unnested. It is
 * parsed and planned once per connection, where a multi-row VALUES insert is a new statement for
 * every batch size (group commit writes batches of every size) with seven parameters per row.
 */
function prepareBatchInsert(db: Database['db']) {
  // Drizzle lists the insert's columns in the table's order; the arrays follow that order.
  return db
    .insert(events)
    .select(
      sql`select * from unnest(${sql.placeholder('ids')}::text[], ${sql.placeholder('membershipIds')}::text[],
        ${sql.placeholder('eventTypes')}::text[], ${sql.placeholder('utilizerIds')}::text[], ${sql.placeholder('documents')}::jsonb[],
        ${sql.placeholder('priors')}::jsonb[], ${sql.placeholder('eventTimes')}::timestamptz[])`,
    )
    .prepare('insert_events');
}

@Injectable()
export class EventRepository {
  private readonly batchInsert: ReturnType<typeof prepareBatchInsert>;

  constructor(@Inject(DATABASE) private readonly database: Database) {
    this.batchInsert = prepareBatchInsert(database.db);
  }

  /** Events on their own (not part of another change): one prepared statement for the whole batch. */
  async insertBatch(rows: readonly EventRow[]): Promise<void> {
    if (!rows.length) return;
    await this.batchInsert.execute({
      ids: rows.map((row) => row.id),
      membershipIds: rows.map((row) => row.membershipId),
      eventTypes: rows.map((row) => row.eventType),
      utilizerIds: rows.map((row) => row.utilizerId),
      documents: rows.map((row) => JSON.stringify(row.document)),
      priors: rows.map((row) => (row.prior === null ? null : JSON.stringify(row.prior))),
      eventTimes: rows.map((row) => row.eventTime.toISOString()),
    });
  }

  async insert(executor: Executor, rows: EventRow[]): Promise<void> {
    if (rows.length) await executor.insert(events).values(rows);
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
    return runListQuery<EventRow>({
      executor: this.database.db,
      table: events,
      scope: eventScope(membershipId),
      schema: EVENT_QUERY_SCHEMA,
      request,
      defaultSort: EVENT_DEFAULT_SORT,
      toResponse: toEventResponse,
    });
  }
}

