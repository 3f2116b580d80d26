import { sql } from 'drizzle-orm';
import { useTestDatabase } from '../../test/support/database';
import { type Database, type Db, prepareAmbientRows } from './database';

/**
 * prepareAmbientRows runs its named statement on whatever executor the Database answers at each
 * call: inside a request transaction it sees that transaction's uncommitted rows (MfaRepository's
 * hasEnabledFactor relies on it when a factor is removed and the recovery codes checked in one
 * transaction). Runs on the embedded database, or on the PostgreSQL server when TEST_DATABASE_URL is set.
 */
describe('prepareAmbientRows', () => {
  const database = useTestDatabase();

  /** A Database whose `db` is `executor()`, as the DATABASE provider answers the request's transaction while one is open. */
  const ambient = (executor: () => Db): Database => ({
    ...database(),
    get db() {
      return executor();
    },
  });

  beforeAll(async () => {
    await database().db.execute(sql`create table ambient_probe (id int primary key, n int not null)`);
  });

  it('reads inside the open transaction, its uncommitted rows included, and outside it afterwards', async () => {
    let current: Db = database().db;
    const countOf = prepareAmbientRows<{ n: number }>(
      ambient(() => current),
      'ambient_probe_count',
      sql`select count(*)::int as n from ambient_probe where n >= ${sql.placeholder('least')}`,
    );
    expect(await countOf({ least: 0 })).toEqual([{ n: 0 }]);

    let inside: { n: number }[] | undefined;
    const rolledBack = database().db.transaction(async (tx) => {
      current = tx;
      await tx.execute(sql`insert into ambient_probe values (1, 5), (2, 7)`);
      inside = await countOf({ least: 6 });
      // Undone: the rows were only ever visible to the transaction.
      tx.rollback();
    });
    await expect(rolledBack).rejects.toThrow('Rollback');
    current = database().db;

    expect(inside).toEqual([{ n: 1 }]);
    expect(await countOf({ least: 0 })).toEqual([{ n: 0 }]);
  });
});
