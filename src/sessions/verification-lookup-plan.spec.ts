import { sql } from 'drizzle-orm';
import { useTestDatabase } from '../../test/support/database';
import { queryRows } from '../database/database';
import { callerVerificationLookup } from './token-session.repository';

/**
 * Every Bearer request runs the verification lookup (membership, token record, sign-in session,
 * user). Its plan must be one probe of each table per token, at any size: no hash of a whole table
 * (what the planner chose for a small membership when the session and user were plain joins, twice
 * the server's time per lookup) and no sequential scan of a large one. Checked on the generic
 * plan, the one a prepared statement keeps, with 50 users in one membership, then with 20,000
 * users, sessions and token records over 2,000 memberships.
 * Runs on the embedded database, or on the PostgreSQL server when TEST_DATABASE_URL is set.
 */
describe('verification lookup plan', () => {
  const database = useTestDatabase();

  /** Loads `count` users, each with a session and a token record, over `memberships` memberships; then ANALYZE. */
  async function load(count: number, memberships: number): Promise<void> {
    await database().db.transaction(async (tx) => {
      await tx.execute(sql`delete from token_sessions`);
      await tx.execute(sql`delete from sessions`);
      await tx.execute(sql`delete from users`);
      await tx.execute(sql`delete from memberships`);
      await tx.execute(sql`
        insert into memberships (id, name, slug, secret_key, created_by)
        select 'm-' || i, 'M' || i, 'm-' || i, 'key', 'test' from generate_series(0, ${memberships - 1}) as i`);
      await tx.execute(sql`
        insert into users (id, membership_id, username, email_address, password_hash, created_by)
        select 'u-' || i, 'm-' || (i % ${memberships}), 'user' || i, 'user' || i || '@example.test', 'x', 'test'
        from generate_series(0, ${count - 1}) as i`);
      await tx.execute(sql`
        insert into sessions (id, membership_id, user_id) select 's-' || i, 'm-' || (i % ${memberships}), 'u-' || i
        from generate_series(0, ${count - 1}) as i`);
      await tx.execute(sql`
        insert into token_sessions (id, session_id, membership_id, user_id, kind, access_jti, access_expires_at, expires_at)
        select 't-' || i, 's-' || i, 'm-' || (i % ${memberships}), 'u-' || i, 'pair', 'j-' || i, now() + interval '1 hour', now() + interval '1 day'
        from generate_series(0, ${count - 1}) as i`);
    });
    await database().db.execute(sql`analyze memberships, users, sessions, token_sessions`);
  }

  /** The generic plan of the lookup, as a prepared statement runs it after its first executions. */
  async function genericPlan(): Promise<string> {
    const { sql: text, params } = callerVerificationLookup(database().db).toSQL();
    // The placeholders ($1: the token record, $4: the membership) and the subqueries' limits.
    const types = params.map((param) => (typeof param === 'number' ? 'int' : 'text')).join(', ');
    return database().db.transaction(async (tx) => {
      await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
      await tx.execute(sql.raw(`prepare lookup_plan (${types}) as ${text}`));
      try {
        const values = params.map((param) => (typeof param === 'number' ? String(param) : `'t-7'`)).join(', ');
        const rows = await queryRows<Record<string, string>>(tx, sql.raw(`explain execute lookup_plan (${values})`));
        return rows.map((row) => Object.values(row)[0]).join('\n');
      } finally {
        await tx.execute(sql`deallocate lookup_plan`);
      }
    });
  }

  it('hashes no table of a small membership', async () => {
    await load(50, 1);
    const plan = await genericPlan();
    expect(plan).not.toMatch(/Hash/);
  });

  it('probes each table by its key when there are many', async () => {
    await load(20_000, 2_000);
    const plan = await genericPlan();
    expect(plan).not.toMatch(/Hash|Seq Scan on (users|sessions|token_sessions)/);
    expect(plan).toMatch(/users_pkey/);
    expect(plan).toMatch(/sessions_pkey/);
    expect(plan).toMatch(/token_sessions_pkey/);
  });
});
