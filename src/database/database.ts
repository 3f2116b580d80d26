import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { sql, type ExtractTablesWithRelations, type SQL, type SQLWrapper } from 'drizzle-orm';
import { PgDialect, type PgDatabase, type PgQueryResultHKT, type PgTransaction } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { migrate as migratePg } from 'drizzle-orm/node-postgres/migrator';
import { Client, escapeIdentifier, Pool, type PoolClient } from 'pg';
import type { Logger } from 'pino';
import type { DatabaseTarget } from '../config/config';
import { schema, type Schema } from './schema';

/** Both drivers' databases share this shape; repositories depend on it only. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;
export type Tx = PgTransaction<PgQueryResultHKT, Schema, ExtractTablesWithRelations<Schema>>;
/** A repository method accepts either, so it can run alone or inside a caller's transaction. */
export type Executor = Db | Tx;

export interface Database {
  readonly db: Db;
  readonly kind: 'embedded' | 'server';
  /** Where the data lives, for the start-up line; never includes a password. */
  readonly description: string;
  /** Whether the server runs autovacuum; undefined for the embedded database, which runs no background workers. */
  readonly autovacuum?: boolean;
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Server only: a dedicated connection LISTENing on `channel` (notifications from every instance),
   * re-opened after a loss. Resolves to the function that stops it. Absent on the embedded
   * database, where one process is the only writer and hears its own commits in memory.
   */
  listen?(channel: string, onNotification: (payload: string) => void, onReconnect: () => void): Promise<() => Promise<void>>;
}

export const DATABASE = Symbol('DATABASE');

/** The migrations the service applies at start (drizzle's SQL files and journal). */
export const MIGRATIONS_FOLDER = join(__dirname, 'migrations');
/** Any fixed 64-bit number; only our instances take it. */
const MIGRATION_LOCK_KEY = 7_460_310_211;

function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/**
 * The handle over an open connection (a PGlite client or a pg pool): `ping` asks `select 1`, and
 * `close` ends the connection once (closing again does nothing).
 */
function handleOf(
  head: Pick<Database, 'db' | 'kind' | 'description' | 'autovacuum'>,
  connection: { query(statement: string): Promise<unknown> },
  end: () => Promise<void>,
): Database {
  let closed = false;
  return {
    ...head,
    ping: async () => {
      await connection.query('select 1');
    },
    close: async () => {
      if (closed) return;
      closed = true;
      await end();
    },
  };
}

/** Applies the migrations not yet applied. One process owns an embedded database, so no lock is needed. */
export async function migrateEmbedded(client: PGlite): Promise<void> {
  await migratePglite(drizzlePglite(client, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
}

/** The embedded databases' handles (cannotCancelStatements). */
const uncancellable = new WeakSet<object>();

/**
 * Whether statements run through `executor` can never be cancelled: the embedded database runs
 * them in this process's own thread and ignores `statement_timeout`, so work a request asks for
 * must be bounded before it starts (docs/bounded-work.md). A transaction's executor answers false.
 */
export function cannotCancelStatements(executor: Executor): boolean {
  return uncancellable.has(executor);
}

async function openEmbedded(dataDir: string | null, image: Blob | undefined): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const client = dataDir ? new PGlite(dataDir) : new PGlite(image ? { loadDataDir: image } : {});
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Db;
  uncancellable.add(db);
  await migrateEmbedded(client);
  const description = dataDir ? `embedded PostgreSQL (PGlite) in ${dataDir}` : 'embedded PostgreSQL (PGlite) in memory';
  return handleOf({ db, kind: 'embedded', description }, client, () => client.close());
}

/** Applies the migrations not yet applied; the caller holds the lock that keeps other instances out. */
export async function migrateServer(client: Client | PoolClient): Promise<void> {
  await migratePg(drizzlePg(client, { schema }), { migrationsFolder: MIGRATIONS_FOLDER });
}

async function openServer(url: string, poolSize: number, statementTimeoutMs = 0): Promise<Database> {
  const pool = new Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: 'portcullis',
    // Sent when each connection starts: the session's default, which RESET returns to (0 or absent: none).
    ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
  });
  // An idle client losing its connection must not take the process down; the next query reconnects.
  pool.on('error', () => undefined);
  const client = await pool.connect();
  let autovacuum: boolean;
  try {
    // Migrations may build indexes on large tables, and waiting for another instance's lock is
    // expected: neither is bound by the statement timeout, which RESET gives back to the pool.
    await client.query('set statement_timeout = 0');
    // Several instances may start at once; only one applies migrations, the others wait and then see them applied.
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await migrateServer(client);
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
      await client.query('reset statement_timeout');
    }
    const { rows } = await client.query<{ autovacuum: string }>("select current_setting('autovacuum') as autovacuum");
    autovacuum = rows[0]?.autovacuum === 'on';
  } finally {
    client.release();
  }
  const db = drizzlePg(pool, { schema }) as unknown as Db;
  const handle = handleOf({ db, kind: 'server', description: `PostgreSQL server at ${redactUrl(url)}`, autovacuum }, pool, () => pool.end());
  return { ...handle, listen: (channel, onNotification, onReconnect) => listenOn(url, channel, onNotification, onReconnect) };
}

/** PostgreSQL's query_canceled: a statement past statement_timeout (or cancelled by an operator). */
const QUERY_CANCELED = '57014';

/** Whether `error` (or an error it wraps, as drizzle wraps the driver's) is a statement cancelled by the database. */
export function isStatementCancelled(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const candidate = current as { code?: unknown; cause?: unknown };
    if (candidate.code === QUERY_CANCELED) return true;
    current = candidate.cause;
  }
  return false;
}

/** Wait before opening a lost LISTEN connection again; the streams' poll covers the gap. */
const LISTEN_RETRY_MS = 1_000;
/**
 * How often the LISTEN connection proves it still answers, and how long the proof may take. A
 * connection dropped without a word (a NAT or a firewall forgetting an idle flow, a server host
 * gone) raises no error: only a question it cannot answer shows that notifications stopped.
 */
const LISTEN_HEARTBEAT_MS = 10_000;
const LISTEN_HEARTBEAT_TIMEOUT_MS = 5_000;

/**
 * LISTEN on a connection of its own (outside the pool: a pooled client would be handed to other
 * queries). On a loss, an error or a heartbeat left unanswered, it reconnects after
 * LISTEN_RETRY_MS and calls `onReconnect`, since notifications sent meanwhile are gone.
 */
async function listenOn(url: string, channel: string, onNotification: (payload: string) => void, onReconnect: () => void): Promise<() => Promise<void>> {
  let stopped = false;
  let client: Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const open = async (): Promise<void> => {
    const next = new Client({
      connectionString: url,
      application_name: 'portcullis-listen',
      connectionTimeoutMillis: 5_000,
      query_timeout: LISTEN_HEARTBEAT_TIMEOUT_MS,
    });
    next.on('notification', (message) => {
      if (message.channel === channel) onNotification(message.payload ?? '');
    });
    // Asks from the start; what it asks before LISTEN is answered simply waits its turn.
    const heartbeat = setInterval(() => void next.query('select 1').catch(lost), LISTEN_HEARTBEAT_MS);
    heartbeat.unref();
    const lost = () => {
      clearInterval(heartbeat);
      if (stopped || client !== next) return;
      client = undefined;
      // With the heartbeat still waiting for its answer, end() closes the socket at once.
      void next.end().catch(() => undefined);
      retry = setTimeout(() => void reopen(), LISTEN_RETRY_MS);
    };
    next.on('error', lost);
    next.on('end', lost);
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${escapeIdentifier(channel)}`);
    } catch (error) {
      clearInterval(heartbeat);
      throw error;
    }
  };
  const reopen = async (): Promise<void> => {
    if (stopped) return;
    try {
      await open();
      onReconnect();
    } catch {
      client = undefined;
      if (!stopped) retry = setTimeout(() => void reopen(), LISTEN_RETRY_MS);
    }
  };
  await open();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}

export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  return target.kind === 'embedded'
    ? openEmbedded(target.dataDir, target.image)
    : openServer(target.url, target.poolSize, target.statementTimeoutMs);
}

/** Where the start-up warning sends the operator. */
export const AUTOVACUUM_DOCS = 'docs/deploying.md#the-database-server';

/**
 * Warns once, at start, when the server runs without autovacuum. Nothing then analyses the
 * service's tables, so its prepared token lookups keep the plans made while the tables were
 * empty, and one such plan read every token record of a membership to find one
 * (the "fifth pass" in the git history of docs/benchmarks.md); nothing vacuums what the expiry sweeper deletes either.
 */
export function warnIfAutovacuumOff(database: Database, logger: Logger): Database {
  if (database.autovacuum === false) {
    logger.warn(
      { autovacuum: 'off', docs: AUTOVACUUM_DOCS },
      `The PostgreSQL server runs with autovacuum off: nothing analyses or vacuums the service's tables. Turn it on, or run vacuumdb --analyze-only regularly (${AUTOVACUUM_DOCS})`,
    );
  }
  return database;
}

/** Rows of a raw statement; both drivers answer with `{ rows }`. */
export async function queryRows<T>(executor: Executor, statement: ReturnType<typeof sql>): Promise<T[]> {
  const result: unknown = await executor.execute(statement);
  return (result as { rows: T[] }).rows;
}

const dialect = new PgDialect();

/**
 * A raw statement (one drizzle's builders cannot express, such as an upsert inside a CTE) as a
 * named prepared statement: its text is fixed, its values are `sql.placeholder`s given at each
 * call. On the server each pooled connection then parses and plans it once instead of at every
 * call, which for a statement of several CTEs is most of its cost (about 0.5 ms of the server's
 * CPU for the sign-in counters' upsert).
 */
export function prepareRows<T>(db: Db, name: string, statement: SQL): (values: Record<string, unknown>) => Promise<T[]> {
  const prepared = db._.session.prepareQuery(dialect.sqlToQuery(statement), undefined, name, false);
  return async (values) => ((await prepared.execute(values)) as { rows: T[] }).rows;
}

/**
 * A select prepared so that its rows come back as arrays (the select's columns in order) and go
 * straight through `readRow`, without Drizzle's row objects (its per-column decoding, then the
 * caller's mapping of them: two objects and a walk of the columns per row). `readRow` gets what
 * the driver gives: JSON already parsed, timestamps as PostgreSQL's text. Sent unnamed, as
 * `select.prepare('')` would be, unless given a `name` (unique in the process).
 */
export function prepareReading<T>(
  executor: Executor,
  select: SQLWrapper,
  readRow: (values: unknown[]) => T,
  name = '',
): { execute(values: Record<string, unknown>): Promise<T[]> } {
  const mapRows = (rows: unknown[][]): T[] => rows.map(readRow);
  const prepared = executor._.session.prepareQuery(dialect.sqlToQuery(select.getSQL()), undefined, name, true, mapRows);
  return { execute: async (values) => (await prepared.execute(values)) as T[] };
}

/**
 * prepareRows for a statement that may also run inside the caller's request transaction: each
 * call prepares it on the executor `database.db` answers then (the transaction while one is open,
 * else the database), under the same name. The statement's text is rendered once; node-postgres
 * parses a named statement once per connection, whichever transaction or caller uses it.
 */
export function prepareAmbientRows<T>(database: Database, name: string, statement: SQL): (values: Record<string, unknown>) => Promise<T[]> {
  const query = dialect.sqlToQuery(statement);
  return async (values) => ((await database.db._.session.prepareQuery(query, undefined, name, false).execute(values)) as { rows: T[] }).rows;
}

/**
 * A condition (always true) that makes the statement's own transaction commit without waiting for
 * its WAL to reach the disk: `synchronous_commit = off` for that transaction only. PostgreSQL
 * evaluates it once, before the statement's first row (a one-time filter), so put it in the
 * WHERE of the statement's outermost query. Only for a statement that runs alone (autocommit),
 * never inside a request transaction, whose changes would all lose their flush with it.
 *
 * Only for writes that may be forgotten: what such a statement commits is visible to every
 * instance at once, exactly like any commit; a crash of the database server (not of an instance)
 * may lose the last fraction of a second of them (wal_writer_delay, three times over at most). In
 * exchange nobody waits for a disk flush for them. Used by the sign-in counters (a rate limit,
 * not a record) and by TokenVerified (a record of a read, not of a change: EventRecorder.recordRead).
 */
export const UNFLUSHED_COMMIT: SQL = sql`(select set_config('synchronous_commit', 'off', true)) is not null`;
