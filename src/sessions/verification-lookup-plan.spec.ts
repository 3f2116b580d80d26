import { sql } from 'drizzle-orm';
import { useTestDatabase } from '../../test/support/database';
import { queryRows } from '../database/database';
import { callerVerificationLookup, verificationBatchLookup } from './token-session.repository';

/**
 * Every Bearer request runs the verification lookup (membership, token record, sign-in session,
 * user); the token operations run it for several tokens in one statement. Its plan must be one probe of each table per token, at any size: no hash of a whole table
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

  /**
   * The generic plan of `query`, as a prepared statement runs it after its first executions:
   * `placeholders` gives each placeholder's type and value; the subqueries' limits are numbers.
   */
  async function genericPlan(query: { toSQL(): { sql: string; params: unknown[] } }, placeholders: Record<string, [string, string]>): Promise<string> {
    const { sql: text, params } = query.toSQL();
    const typed = params.map((param) => (typeof param === 'number' ? ['int', String(param)] : placeholders[(param as { name: string }).name]));
    return database().db.transaction(async (tx) => {
      await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
      await tx.execute(sql.raw(`prepare lookup_plan (${typed.map(([type]) => type).join(', ')}) as ${text}`));
      try {
        const rows = await queryRows<Record<string, string>>(tx, sql.raw(`explain execute lookup_plan (${typed.map(([, value]) => value).join(', ')})`));
        return rows.map((row) => Object.values(row)[0]).join('\n');
      } finally {
        await tx.execute(sql`deallocate lookup_plan`);
      }
    });
  }

  /** A Bearer request's lookup of its token. */
  const callerPlan = () => genericPlan(callerVerificationLookup(database().db), { tokenId: ['text', `'t-7'`], membershipId: ['text', `'m-7'`] });

  /** The token operations' lookup of several tokens in one statement. */
  const batchPlan = () =>
    genericPlan(verificationBatchLookup(database().db), { membershipIds: ['text[]', `'{m-7,m-8}'`], tokenIds: ['text[]', `'{t-7,t-8}'`] });

  it('hashes no table of a small membership', async () => {
    await load(50, 1);
    const plan = await callerPlan();
    expect(plan).not.toMatch(/Hash/);
    // The lookup of several tokens hashes the memberships named (by their key), never the other tables.
    expect(await batchPlan()).not.toMatch(/Hash Cond:[^\n]*(users|sessions|token_sessions)\./);
  });

  it('probes each table by its key when there are many', async () => {
    await load(20_000, 2_000);
    const plan = await callerPlan();
    expect(plan).not.toMatch(/Hash|Seq Scan on (users|sessions|token_sessions)/);
    expect(plan).toMatch(/users_pkey/);
    expect(plan).toMatch(/sessions_pkey/);
    expect(plan).toMatch(/token_sessions_pkey/);

    // The token operations' lookup of several tokens: the same probes for each token; the memberships named by their key.
    const batched = await batchPlan();
    expect(batched).not.toMatch(/Seq Scan on (memberships|users|sessions|token_sessions)|Hash Cond:[^\n]*(users|sessions|token_sessions)\./);
    for (const index of ['memberships_pkey', 'token_sessions_pkey', 'sessions_pkey', 'users_pkey']) expect(batched).toMatch(index);
  });
});
