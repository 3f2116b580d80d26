import { AsyncLocalStorage } from 'node:async_hooks';
import { Global, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { sql } from 'drizzle-orm';
import { ClsModule, ClsService } from 'nestjs-cls';
import { serverUrl, useTestDatabase } from '../../test/support/database';
import { queryRows } from '../database/database';
import { DRIZZLE_CLIENT, DrizzleAdapter, RequestTransaction } from './request-transaction';

/**
 * RequestTransaction keeps nestjs-cls's AsyncLocalStorage enabled only while a transaction runs
 * (Node 20 runs a hook per promise while one is enabled). What must hold with it: a transaction
 * keeps its context across awaits while others (of this app or another app in the process) start
 * and end around it, and work it left behind reads as outside any. Runs on the embedded database,
 * or on the PostgreSQL server when TEST_DATABASE_URL is set.
 */
describe('RequestTransaction', () => {
  const database = useTestDatabase();

  /** Two instances, as two apps in one process (the two-instance e2e tests): one storage between them. */
  let first: RequestTransaction;
  let second: RequestTransaction;
  let storage: AsyncLocalStorage<unknown>;
  const apps: { close(): Promise<void> }[] = [];

  const appTransaction = async (): Promise<{ transaction: RequestTransaction; cls: ClsService }> => {
    @Global()
    @Module({ providers: [{ provide: DRIZZLE_CLIENT, useFactory: () => database().db }], exports: [DRIZZLE_CLIENT] })
    class DrizzleClientModule {}
    @Module({
      imports: [DrizzleClientModule, ClsModule.forRoot({ global: true, plugins: [new ClsPluginTransactional({ adapter: new DrizzleAdapter() })] })],
      providers: [RequestTransaction],
    })
    class TransactionModule {}
    const app = await NestFactory.createApplicationContext(TransactionModule, { logger: false });
    apps.push(app);
    return { transaction: app.get(RequestTransaction), cls: app.get(ClsService) };
  };

  /** Node 20's own flag (lib/async_hooks.js): whether the storage's hooks run. */
  const enabled = (): boolean => (storage as unknown as { enabled: boolean }).enabled;
  const count = async (): Promise<number> => {
    const [row] = await queryRows<{ n: number }>(database().db, sql`select count(*)::int as n from transaction_probe`);
    return row.n;
  };
  const insert = (transaction: RequestTransaction, id: number) => transaction.executor.execute(sql`insert into transaction_probe values (${id})`);
  const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

  beforeAll(async () => {
    await database().db.execute(sql`create table transaction_probe (id int primary key)`);
    const a = await appTransaction();
    first = a.transaction;
    second = (await appTransaction()).transaction;
    storage = (a.cls as unknown as { als: AsyncLocalStorage<unknown> }).als;
    expect(storage).toBeInstanceOf(AsyncLocalStorage);
  });

  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  beforeEach(async () => {
    await database().db.execute(sql`delete from transaction_probe`);
  });

  it('leaves the storage disabled while no transaction runs, and enabled while one does', async () => {
    expect(enabled()).toBe(false);
    await first.run(async () => {
      expect(enabled()).toBe(true);
      await tick();
      expect(first.active).toBe(true);
    });
    expect(enabled()).toBe(false);
    expect(first.active).toBe(false);
  }, 10_000);

  // The embedded database has one connection: a second transaction waits for the first to end.
  const whileOthersRun = serverUrl() ? it : it.skip;

  whileOthersRun('a transaction that outlives others, of this app and of another, keeps its context across awaits', async () => {
    let releaseLong!: () => void;
    const longHeld = new Promise<void>((resolve) => (releaseLong = resolve));
    const long = first.run(async () => {
      await insert(first, 1);
      await longHeld;
      // The others have ended meanwhile: this one is still open, its writes still its own.
      expect(first.active).toBe(true);
      await insert(first, 2);
      await tick();
      throw new Error('undo the long one');
    });
    await first.run(async () => insert(first, 10));
    await second.run(async () => insert(second, 20));
    expect(enabled()).toBe(true);
    releaseLong();
    await expect(long).rejects.toThrow('undo the long one');
    // Rolled back whole: both inserts were in its transaction, none outside it.
    expect(await count()).toBe(2);
    expect(enabled()).toBe(false);
  }, 10_000);

  it('work a transaction started and left behind runs outside any, also while another is open', async () => {
    let lateWork: Promise<void> | undefined;
    let activeThen: boolean | undefined;
    await first.run(async () => {
      lateWork = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        activeThen = first.active;
        await insert(first, 3);
      })();
    });
    // Another transaction is open (the storage enabled again) when the late work wakes, and is undone.
    await expect(
      second.run(async () => {
        await new Promise((resolve) => setTimeout(resolve, 80));
        throw new Error('undo the other');
      }),
    ).rejects.toThrow('undo the other');
    await lateWork;
    expect(activeThen).toBe(false);
    // Committed on its own, on the database: not undone with the other.
    expect(await count()).toBe(1);
  }, 10_000);
});
