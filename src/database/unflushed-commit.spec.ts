import { sql } from 'drizzle-orm';
import { useTestDatabase } from '../../test/support/database';
import { queryRows, UNFLUSHED_COMMIT } from './database';

/**
 * UNFLUSHED_COMMIT turns synchronous_commit off for the transaction of the statement that carries
 * it, and for nothing else: not for the next transaction on the same connection. The statements
 * that use it (the sign-in counters) run alone, so "the transaction" is theirs.
 * Runs on the embedded database, or on the PostgreSQL server when TEST_DATABASE_URL is set.
 */
describe('UNFLUSHED_COMMIT', () => {
  const database = useTestDatabase();

  /** synchronous_commit as `statement` leaves it, read in the same transaction, and in the next one. */
  async function settingAfter(statement: ReturnType<typeof sql>): Promise<{ inside: string; after: string }> {
    const inside = await database().db.transaction(async (tx) => {
      await tx.execute(sql`create temporary table if not exists probe (id int primary key, n int not null) on commit drop`);
      await tx.execute(sql`insert into probe values (1, 0)`);
      await tx.execute(statement);
      const [row] = await queryRows<{ synchronous_commit: string }>(tx, sql`show synchronous_commit`);
      return row.synchronous_commit;
    });
    const [row] = await queryRows<{ synchronous_commit: string }>(database().db, sql`show synchronous_commit`);
    return { inside, after: row.synchronous_commit };
  }

  it('turns the flush off for its own transaction only', async () => {
    expect(await settingAfter(sql`update probe set n = n + 1 where id = 1 and ${UNFLUSHED_COMMIT}`)).toEqual({ inside: 'off', after: 'on' });
  });

  it('is evaluated even when the outer query finds no row (a write in a CTE that matched nothing)', async () => {
    const statement = sql`with changed as (update probe set n = n + 1 where id = 2 returning id) select id from changed where ${UNFLUSHED_COMMIT}`;
    expect(await settingAfter(statement)).toEqual({ inside: 'off', after: 'on' });
  });

  it('leaves a statement without it flushed', async () => {
    expect(await settingAfter(sql`update probe set n = n + 1 where id = 1`)).toEqual({ inside: 'on', after: 'on' });
  });
});
