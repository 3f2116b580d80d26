import { writeFileSync } from 'node:fs';
import { sql } from 'drizzle-orm';
import { useTestDatabase } from '../../test/support/database';
import { listSelect, parseListParams } from '../common/query';
import { queryRows } from '../database/database';
import { events } from '../database/schema';
import { eventListQuery } from './event.repository';

/**
 * The events API's common queries use the indexes of the events table. The statements are built
 * exactly as runListQuery builds them (tenant scope, translated `where`, sort with the default
 * tie-breaker, limit). 20,000 events over 50 memberships, then ANALYZE, so that the planner
 * chooses by statistics (no enable_seqscan tricks).
 *
 * Runs on the embedded database, or on the PostgreSQL server when TEST_DATABASE_URL is set.
 * EVENT_QUERY_PLANS_OUT=<file> writes the plans as markdown (docs/event-query-plans.md).
 */
const MEMBERSHIPS = 50;
const EVENTS = 20_000;
const TYPES = ['UserCreated', 'UserUpdated', 'UserDeleted', 'TokenGenerated', 'TokenVerified', 'TokenRevoked', 'RoleCreated', 'WebhookRequestSent'];
const LIMIT = 100;

describe('event query plans', () => {
  const database = useTestDatabase();
  const plans: { title: string; sql: string; plan: string }[] = [];
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');

  beforeAll(async () => {
    // One event per minute, round-robin over memberships, types and 20 utilizers per membership.
    await database().db.execute(sql`
      insert into ${events} (id, membership_id, event_type, utilizer_id, document, prior, event_time)
      select 'ev-' || i, 'm-' || (i % ${MEMBERSHIPS}),
        (${sql.raw(`array[${TYPES.map((type) => `'${type}'`).join(',')}]`)})[1 + (i / ${MEMBERSHIPS}) % ${TYPES.length}],
        'u-' || (i % ${MEMBERSHIPS}) || '-' || ((i / 7) % 20), jsonb_build_object('n', i), null,
        ${new Date(t0).toISOString()}::timestamptz + make_interval(mins => i)
      from generate_series(1, ${EVENTS}) as i`);
    await database().db.execute(sql`analyze ${events}`);
  });

  afterAll(async () => {
    if (process.env.EVENT_QUERY_PLANS_OUT) {
      const kind = database().kind === 'server' ? 'PostgreSQL server' : 'embedded PostgreSQL (PGlite)';
      const text = plans.map((p) => `### ${p.title}\n\n\`\`\`sql\n${p.sql}\n\`\`\`\n\n\`\`\`\n${p.plan}\n\`\`\`\n`).join('\n');
      writeFileSync(process.env.EVENT_QUERY_PLANS_OUT, `## ${kind}\n\n${text}`);
    }
  });

  async function explain(title: string, where: Record<string, unknown>, sort?: string): Promise<string> {
    const request = { query: { limit: String(LIMIT), ...(sort ? { sort } : {}) }, where };
    const query = listSelect(eventListQuery(database().db, 'm-7', request), parseListParams(request.query));
    const rows = await queryRows<Record<string, string>>(database().db, sql`explain ${query.getSQL()}`);
    const plan = rows.map((row) => Object.values(row)[0]).join('\n');
    plans.push({ title, sql: query.toSQL().sql, plan });
    return plan;
  }

  const usesIndex = (plan: string, index: string): boolean =>
    new RegExp(`(Index (Only )?Scan( Backward)? using ${index} on events)|(Bitmap Index Scan on ${index})`).test(plan);

  it('newest first (the default list) scans events_membership_time backward, without sorting', async () => {
    const plan = await explain('Newest first (GET /events)', {});
    expect(usesIndex(plan, 'events_membership_time')).toBe(true);
    expect(plan).toMatch(/Index Scan Backward using events_membership_time/);
    expect(plan).not.toMatch(/Seq Scan/);
  });

  it.each([
    ['type', 'events_membership_type_time', 'By type, newest first', { event_type: 'UserCreated' }],
    ['utilizer', 'events_membership_utilizer_time', 'By utilizer, newest first', { utilizer_id: 'u-7-3' }],
  ])('by %s uses %s', async (_field, index, label, where) => {
    const plan = await explain(label, where);
    expect(usesIndex(plan, index)).toBe(true);
    expect(plan).not.toMatch(/Seq Scan/);
  });

  it('by several types runs one events_membership_type_time scan per type', async () => {
    const plan = await explain('By several types ($in), newest first', { event_type: { $in: ['UserCreated', 'UserDeleted'] } });
    expect(plan.match(/(Index Scan( Backward)? using|Bitmap Index Scan on) events_membership_type_time/g)).toHaveLength(2);
    expect(plan).not.toMatch(/Seq Scan/);
  });

  it('a time range uses events_membership_time', async () => {
    const from = new Date(t0 + 3 * 24 * 3600_000).toISOString();
    const to = new Date(t0 + 4 * 24 * 3600_000).toISOString();
    const plan = await explain('Time range, oldest first', { event_time: { $gte: from, $lt: to } }, 'event_time asc');
    expect(usesIndex(plan, 'events_membership_time')).toBe(true);
    expect(plan).not.toMatch(/Seq Scan/);
  });

  // Every documented filterable field (EVENT_QUERY_SCHEMA) alone, and every sortable field in
  // both directions: an index is read, never the whole table.
  const anyIndexOnEvents = /(Index (Only )?Scan( Backward)? using|Bitmap Index Scan on) events_\w+/;

  it.each([
    ['_id', { _id: 'ev-7007' }],
    ['event_type', { event_type: 'UserDeleted' }],
    ['utilizer_id', { utilizer_id: 'u-7-11' }],
    ['event_time', { event_time: { $lt: '2026-01-03T00:00:00.000Z' } }],
    ['membership_id', { membership_id: 'm-7' }],
    ['document', { 'document.n': 7007 }],
    ['prior', { prior: { $exists: false } }],
  ])('a filter by %s reads an index, never a sequential scan', async (field, where) => {
    const plan = await explain(`Filter by ${field}`, where);
    expect(plan).toMatch(anyIndexOnEvents);
    expect(plan).not.toMatch(/Seq Scan/);
  });

  it.each(['event_type', 'utilizer_id', 'event_time'].flatMap((field) => [`${field} asc`, `${field} desc`]))(
    'sorting by %s reads an index, never a sequential scan',
    async (sort) => {
      const plan = await explain(`Sorted by ${sort}`, {}, sort);
      expect(plan).toMatch(anyIndexOnEvents);
      expect(plan).not.toMatch(/Seq Scan/);
    },
  );

  it('type and time range together use events_membership_type_time', async () => {
    const from = new Date(t0 + 3 * 24 * 3600_000).toISOString();
    const plan = await explain('Type since a time, newest first', { event_type: 'TokenGenerated', event_time: { $gte: from } });
    expect(usesIndex(plan, 'events_membership_type_time')).toBe(true);
    expect(plan).not.toMatch(/Seq Scan/);
  });
});
