import { Inject, Injectable } from '@nestjs/common';
import { sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database, prepareRows, queryRows } from '../database/database';
import type { EventRow } from '../database/schema';

/**
 * A position in a membership's stream: after every event of transactions older than `xid`, and
 * after the events of transaction `xid` whose id sorts at or before `id`. Written `<xid>.<id>`.
 */
export interface StreamCursor {
  /** The writing transaction's id (xid8), as decimal text: it may exceed 2^53. */
  xid: string;
  id: string;
}

export interface StreamRead {
  /** Events that every reader may now see in this order, and the cursor after each. */
  events: { row: EventRow; cursor: StreamCursor }[];
  /** Events exist past the last one returned but wait for an older transaction to finish: read again soon. */
  heldBack: boolean;
  /** The read stopped at its limit: read again at once. */
  full: boolean;
}

interface StreamedEventRecord {
  id: string;
  membership_id: string;
  event_type: string;
  utilizer_id: string;
  document: Record<string, unknown>;
  prior: Record<string, unknown> | null;
  event_time: Date | string;
  xid: string;
  settled: boolean;
}

/**
 * The event log in commit order (docs/events.md, "The live stream"). Events are ordered by the
 * id of the transaction that wrote them (`commit_xid`, migration 0014), then by id. Transaction
 * ids are handed out at a transaction's first write, not at its commit, so a later id may commit
 * first. A reader therefore only passes events below the commit horizon (HORIZON_CTES): every
 * transaction older than that has finished, so no event can still appear behind them. The rest
 * wait ("held back") until the older transactions finish. Costs: one index
 * (membership_id, commit_xid, id); the column itself is a default, no statement is added to writes.
 */
/**
 * The commit horizon of the statement's snapshot: every transaction of this database with a
 * lower id had finished when the snapshot was taken, so the events below it are all visible and
 * none can appear among them later. It is the lowest transaction id the snapshot lists as in
 * progress, leaving out those that pg_stat_activity places in another database of the cluster
 * (a long transaction elsewhere on a shared server must not hold this service's streams up); a
 * transaction that finished between the snapshot and that look-up is not found there and still
 * counts (the next read passes it). With none in progress: the snapshot's xmax. Computed in the
 * statement that reads the events, so both use one snapshot.
 */
const HORIZON_CTES: SQL = sql.raw(`snap as materialized (select pg_current_snapshot() as s),
  horizon as materialized (
    select coalesce(
      (select min(x) from snap, pg_snapshot_xip(snap.s) as x
        where not exists (select 1 from pg_stat_activity a where a.backend_xid = xid(x) and a.datname <> current_database())),
      (select pg_snapshot_xmax(s) from snap)) as xid)`);

/**
 * NOTIFY as a named statement: sent unnamed, PostgreSQL parsed it again on every call, and every
 * instance sends one after its commits, up to 40 a second under load (log_statement_stats,
 * 2026-12-03: 126 µs of the server's CPU per NOTIFY unnamed, 54 named).
 */
const NOTIFY: SQL = sql`select pg_notify(${sql.placeholder('channel')}::text, ${sql.placeholder('payload')}::text)`;

/**
 * A stream's read: up to `limit` events after the cursor, in commit order, each saying whether it
 * lies below the commit horizon. Named, one statement with a type filter and one without: a
 * stream reads after every commit of its membership, back to back under load, and sent unnamed
 * each read was parsed and planned again: one stream of the client library's types beside 16
 * connections refreshing took 38% of their rate, 8% named (bench/stream-cost.mjs, 2026-12-03).
 */
function readAfterStatement(typed: boolean): SQL {
  const p = (name: string) => sql.placeholder(name);
  return sql`with ${HORIZON_CTES}
    select id, membership_id, event_type, utilizer_id, document, prior, event_time, commit_xid::text as xid,
      commit_xid < (select xid from horizon) as settled
    from events
    where membership_id = ${p('membershipId')}::text and (commit_xid, id) > (${p('xid')}::xid8, ${p('id')}::text)
      ${typed ? sql`and event_type = any(${p('types')}::text[])` : sql``}
    order by commit_xid, id
    limit ${p('limit')}::int`;
}

@Injectable()
export class EventStreamRepository {
  private readonly notifyRows;
  private readonly readRows;
  private readonly readTypedRows;

  constructor(@Inject(DATABASE) private readonly database: Database) {
    // Bound to the pool, never to a request's transaction: a NOTIFY is sent after the commit, and
    // streams read outside any request.
    this.notifyRows = prepareRows<never>(database.db, 'event_notify', NOTIFY);
    this.readRows = prepareRows<StreamedEventRecord>(database.db, 'event_stream_read', readAfterStatement(false));
    this.readTypedRows = prepareRows<StreamedEventRecord>(database.db, 'event_stream_read_typed', readAfterStatement(true));
  }

  /** Where a stream that does not resume starts: before every transaction not yet finished now. */
  async start(): Promise<StreamCursor> {
    const [row] = await queryRows<{ xid: string }>(this.database.db, sql`with ${HORIZON_CTES} select xid::text as xid from horizon`);
    // (horizon, '') sorts before every event of the transactions not finished now, and of every later one.
    return { xid: row?.xid ?? '0', id: '' };
  }

  /** The cursor of an event of the membership (a stream resumed from an event id or a cursor), or undefined. */
  async cursorOfEvent(membershipId: string, id: string): Promise<StreamCursor | undefined> {
    const [row] = await queryRows<{ xid: string }>(
      this.database.db,
      sql`select commit_xid::text as xid from events where membership_id = ${membershipId} and id = ${id} limit 1`,
    );
    return row ? { xid: row.xid, id } : undefined;
  }

  /** Up to `limit` events after `cursor`, of `types` only when given, in commit order. */
  async readAfter(membershipId: string, cursor: StreamCursor, limit: number, types?: readonly string[]): Promise<StreamRead> {
    const values = { membershipId, xid: cursor.xid, id: cursor.id, limit };
    const rows = types ? await this.readTypedRows({ ...values, types }) : await this.readRows(values);
    const events: StreamRead['events'] = [];
    for (const record of rows) {
      if (!record.settled) return { events, heldBack: true, full: false };
      events.push({ row: toRow(record), cursor: { xid: record.xid, id: record.id } });
    }
    return { events, heldBack: false, full: rows.length === limit };
  }

  /** Wakes the streams of every instance (LISTEN on `channel`); sent after the commit, outside any transaction. */
  async notify(channel: string, payload: string): Promise<void> {
    await this.notifyRows({ channel, payload });
  }
}

function toRow(record: StreamedEventRecord): EventRow {
  return {
    id: record.id,
    membershipId: record.membership_id,
    eventType: record.event_type,
    utilizerId: record.utilizer_id,
    document: record.document,
    prior: record.prior ?? null,
    eventTime: record.event_time instanceof Date ? record.event_time : new Date(record.event_time),
  };
}
