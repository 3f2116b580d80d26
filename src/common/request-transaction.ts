import { AsyncLocalStorage } from 'node:async_hooks';
import { Inject, Injectable } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterDrizzleOrm } from '@nestjs-cls/transactional-adapter-drizzle-orm';
import type { Database, Db, Tx } from '../database/database';

/** The drizzle client the transactional adapter opens transactions on: the database itself, never a transaction. */
export const DRIZZLE_CLIENT = Symbol('DRIZZLE_CLIENT');

type TransactionOptions = Parameters<Db['transaction']>[1];

/** No options when none are set: drizzle's PGlite driver turns an empty options object into `set transaction ` (a syntax error). */
const optionsOrNone = (options: TransactionOptions): TransactionOptions => (options && Object.keys(options).length ? options : undefined);

/**
 * The library's drizzle adapter (transactions on DRIZZLE_CLIENT), except that it hands drizzle no
 * options object when no option is set, so that both drivers (PGlite and node-postgres) accept it.
 */
export class DrizzleAdapter extends TransactionalAdapterDrizzleOrm<Db> {
  constructor() {
    super({ drizzleInstanceToken: DRIZZLE_CLIENT });
    const libraryFactory = this.optionsFactory;
    this.optionsFactory = (db) => {
      const library = libraryFactory(db);
      return {
        ...library,
        wrapWithTransaction: (options, fn, setClient) => library.wrapWithTransaction(optionsOrNone(options), fn, setClient),
        wrapWithNestedTransaction: (options, fn, setClient, client) => library.wrapWithNestedTransaction(optionsOrNone(options), fn, setClient, client),
      };
    };
  }
}

type BeforeCommit = (tx: Tx) => Promise<void>;
type AfterCommit = () => void;

/** One request's unit of work: its hooks and whatever a feature keeps for it (the recorder's pending events). */
interface UnitOfWork {
  /** False once the transaction has committed or rolled back: work started inside it but still running must not use it. */
  open: boolean;
  readonly beforeCommit: BeforeCommit[];
  readonly afterCommit: AfterCommit[];
  readonly state: Map<symbol, unknown>;
}

const UNIT_OF_WORK = Symbol('UNIT_OF_WORK');

/**
 * nestjs-cls's AsyncLocalStorage, enabled only while a request transaction runs. On Node 20 an
 * enabled AsyncLocalStorage runs a hook for every promise the process makes (4-5% of verify-token's
 * main-thread samples, and a third of its garbage collection), and nestjs-cls enables its storage
 * as it loads; the request transaction is its only user here. `run` enables it again (AsyncLocalStorage.run does), and the last transaction
 * to end disables it, for every instance of the app in the process (the storage is one per process).
 * Disabling ends no live context, since none is open then: a context that late work kept holds a
 * closed unit, which reads as none (`open`), and work started while it was disabled holds nothing.
 */
const runningOn = new WeakMap<AsyncLocalStorage<unknown>, number>();

/** The storage behind a ClsService (a private field of nestjs-cls): when it is not found, it stays enabled, as before. */
function storageOf(cls: ClsService): AsyncLocalStorage<unknown> | undefined {
  const storage = (cls as unknown as { als?: unknown }).als;
  return storage instanceof AsyncLocalStorage ? (storage as AsyncLocalStorage<unknown>) : undefined;
}

/**
 * The ambient transaction of a request (nestjs-cls + @nestjs-cls/transactional, drizzle adapter).
 * `run` opens it; while it is open every repository reaches it through `executor` (the DATABASE
 * provider's `db` is that executor), so services no longer pass transaction handles by hand.
 * Outside one, `executor` is the database itself.
 *
 * Why `open` beside the library's own "is a transaction active": the async context outlives the
 * transaction (a timer or a queue job started inside it keeps the context), and such late work must
 * get the database, not a transaction that has already committed and released its connection.
 */
@Injectable()
export class RequestTransaction {
  private readonly storage: AsyncLocalStorage<unknown> | undefined;

  constructor(
    private readonly host: TransactionHost<DrizzleAdapter>,
    private readonly cls: ClsService,
    @Inject(DRIZZLE_CLIENT) private readonly db: Db,
  ) {
    this.storage = storageOf(cls);
    if (this.storage && !runningOn.get(this.storage)) this.storage.disable();
  }

  /**
   * Runs `work` in one transaction. `beforeCommit` hooks run in it after `work`; a failure of either
   * rolls everything back. `afterCommit` hooks run, in the order they were added, only once the
   * commit has happened (webhook and mail dispatch hear of events there).
   */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const unit: UnitOfWork = { open: true, beforeCommit: [], afterCommit: [], state: new Map() };
    this.holdStorage();
    let value: T;
    try {
      value = await this.cls.run(async () => {
        this.cls.set(UNIT_OF_WORK, unit);
        try {
          return await this.host.withTransaction(async () => {
            const result = await work();
            // A hook may add another (the first event of a hook's own write); run until none is left.
            for (let i = 0; i < unit.beforeCommit.length; i++) await unit.beforeCommit[i](this.host.tx as Tx);
            return result;
          });
        } finally {
          unit.open = false;
        }
      });
    } finally {
      this.releaseStorage();
    }
    for (const hook of unit.afterCommit) hook();
    return value;
  }

  /** Whether the caller runs inside an open request transaction. */
  get active(): boolean {
    return this.currentUnit() !== undefined;
  }

  /** The request's transaction while one is open, else the database. */
  get executor(): Db {
    return this.currentUnit() ? this.host.tx : this.db;
  }

  /** Work that belongs in the transaction but must happen last (the recorder's event insert). Only inside one. */
  beforeCommit(hook: BeforeCommit): void {
    this.requireUnit().beforeCommit.push(hook);
  }

  /** Runs `hook` once the request's transaction has committed; at once when there is none. Never on a rollback. */
  afterCommit(hook: AfterCommit): void {
    const unit = this.currentUnit();
    if (unit) unit.afterCommit.push(hook);
    else hook();
  }

  /** A value kept for the rest of this transaction under `key`, made by `create` on first use. Only inside one. */
  state<T>(key: symbol, create: () => T): T {
    const unit = this.requireUnit();
    if (!unit.state.has(key)) unit.state.set(key, create());
    return unit.state.get(key) as T;
  }

  /** One more transaction keeps the storage enabled (`cls.run` enables it when it is not). */
  private holdStorage(): void {
    if (this.storage) runningOn.set(this.storage, (runningOn.get(this.storage) ?? 0) + 1);
  }

  /** The last transaction of the process to end disables the storage. */
  private releaseStorage(): void {
    if (!this.storage) return;
    const left = (runningOn.get(this.storage) ?? 1) - 1;
    runningOn.set(this.storage, left);
    if (left === 0) this.storage.disable();
  }

  private currentUnit(): UnitOfWork | undefined {
    if (!this.cls.isActive()) return undefined;
    const unit = this.cls.get<UnitOfWork | undefined>(UNIT_OF_WORK);
    return unit?.open && this.host.isTransactionActive() ? unit : undefined;
  }

  private requireUnit(): UnitOfWork {
    const unit = this.currentUnit();
    if (!unit) throw new Error('no request transaction is open');
    return unit;
  }
}

/**
 * The DATABASE every repository injects: the opened database, whose `db` is the request's
 * transaction while one is open. Repositories that default their executor to `database.db` join
 * the request transaction without being told; on the embedded database this is also what keeps a
 * read inside a request transaction from waiting on that very transaction (PGlite has one connection).
 * So a caller that may run inside one awaits its queries one at a time, never in a `Promise.all`:
 * in a transaction they share one client, where pg queues a second query only with a deprecation
 * warning, and pg 9 refuses it.
 */
export function ambientDatabase(database: Database, transaction: RequestTransaction): Database {
  return {
    get db() {
      return transaction.executor;
    },
    kind: database.kind,
    description: database.description,
    ping: () => database.ping(),
    close: () => database.close(),
    // The event streams' LISTEN connection is the server's own, never a transaction's.
    ...(database.listen ? { listen: database.listen } : {}),
  };
}
