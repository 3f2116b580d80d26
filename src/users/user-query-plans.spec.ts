import { sql } from 'drizzle-orm';
import { listSelect, parseListParams } from '../common/query';
import { useTestDatabase } from '../../test/support/unit/test-database';
import { queryRows } from '../database/database';
import { memberships, users } from '../database/schema';
import { userListQuery } from './user.repository';

/**
 * Every query shape a caller can send to users `_query` with the documented filterable and
 * sortable fields uses an index of the users table: the statements are built exactly as
 * runListQuery builds them. 20,000 users over 20 memberships, then ANALYZE, so that the planner
 * chooses by statistics (no enable_seqscan tricks). A plan that read every user of the membership
 * (or of the table) grows with the tenant: the scale bench (bench/scale.mjs) measured users
 * `_query` by username 3x slower at 100k users than at 1k before users_membership_username.
 *
 * Runs on the embedded database, or on the PostgreSQL server when TEST_DATABASE_URL is set.
 */
const MEMBERSHIPS = 20;
const USERS = 20_000;
const LIMIT = 20;

describe('user query plans', () => {
  const testDb = useTestDatabase(async (database) => {
    await database.db.execute(sql`
      insert into ${memberships} (id, name, slug, secret_key, created_at, created_by)
      select 'm-' || i, 'Membership ' || i, 'membership-' || i, 'secret-' || i, now(), 'system'
      from generate_series(0, ${MEMBERSHIPS - 1}) as i`);
    await database.db.execute(sql`
      insert into ${users} (id, membership_id, username, email_address, password_hash, firstname, role, created_at, created_by)
      select 'u-' || i, 'm-' || (i % ${MEMBERSHIPS}), 'User-' || i, 'user-' || i || '@example.com', 'not a hash', 'First ' || (i % 100),
        'role-' || (i % 5), now() - make_interval(secs => i), 'system'
      from generate_series(1, ${USERS}) as i`);
    await database.db.execute(sql`analyze ${users}`);
  });

  async function explain(where: Record<string, unknown>, sort?: string): Promise<string> {
    const request = { query: { limit: String(LIMIT), ...(sort ? { sort } : {}) }, where };
    const { db } = testDb.database;
    const query = listSelect(userListQuery(db, 'm-7', request), parseListParams(request.query));
    const rows = await queryRows<Record<string, string>>(db, sql`explain ${query.getSQL()}`);
    return rows.map((row) => Object.values(row)[0]).join('\n');
  }

  const indexUsed = (plan: string): string | undefined =>
    /(?:Index (?:Only )?Scan(?: Backward)? using|Bitmap Index Scan on) (\w+) on users/.exec(plan)?.[1];

  it.each([
    ['username', { username: 'User-7007' }, 'users_membership_username'],
    ['e-mail address', { email_address: 'user-7007@example.com' }, 'users_email_unique'],
    ['_id', { _id: 'u-7007' }, 'users_pkey'],
    ['role', { role: 'role-2' }, undefined],
    ['a creation time range', { 'sys.created_at': { $gte: '2026-01-01T00:00:00.000Z' } }, 'users_membership_created'],
  ])('a filter by %s uses an index, never a sequential scan', async (_name, where, index) => {
    const plan = await explain(where);
    expect(plan).not.toMatch(/Seq Scan/);
    if (index) expect(indexUsed(plan)).toBe(index);
    else expect(indexUsed(plan)).toBeDefined();
  });

  it.each(['_id', 'email_address', 'role', 'sys.created_at'].flatMap((field) => [`${field} asc`, `${field} desc`]))(
    'sorting by %s reads an index, never the whole table',
    async (sort) => {
      const plan = await explain({}, sort);
      expect(plan).not.toMatch(/Seq Scan/);
      expect(indexUsed(plan)).toBeDefined();
    },
  );

  it('the default list (oldest first) reads users_membership_created in order', async () => {
    const plan = await explain({});
    expect(indexUsed(plan)).toBe('users_membership_created');
    expect(plan).not.toMatch(/Seq Scan/);
  });
});
