import { getTableColumns, sql } from 'drizzle-orm';
import { serverUrl, useTestDatabase } from '../../test/support/database';
import { ListStatements, runListQuery, type ListRequest } from '../common/query';
import { queryRows } from '../database/database';
import { events } from '../database/schema';
import { EVENT_ROW_COLUMNS } from './event.mapper';
import { eventListQuery } from './event.repository';

/**
 * The event list's statements reused by query shape (ListStatements) answer exactly what a
 * statement built for the request answers: each request below runs both ways, twice, and the
 * requests of one shape with other values (another membership, other types, other bounds) get
 * their own rows, never those of the request the statement was built for. The reused statements
 * read their rows straight to responses (`readEventRow`), the others through Drizzle's rows and
 * `toEventResponse`: the comparison holds the two readers to one answer.
 */
const TYPES = ['UserCreated', 'UserUpdated', 'UserDeleted', 'TokenGenerated', 'TokenVerified'];

describe('event list statements by query shape', () => {
  const database = useTestDatabase();
  const t0 = Date.parse('2026-01-01T00:00:00.000Z');

  beforeAll(async () => {
    // 600 events over two memberships; documents with a tag, a number and sometimes a flag.
    await database().db.execute(sql`
      insert into ${events} (id, membership_id, event_type, utilizer_id, document, prior, event_time)
      select 'ls-' || i, 'm-' || (i % 2),
        (${sql.raw(`array[${TYPES.map((type) => `'${type}'`).join(',')}]`)})[1 + (i / 2) % ${TYPES.length}],
        'u-' || (i % 7),
        case when i % 3 = 0 then jsonb_build_object('n', i, 'tag', 'a', 'flag', true) else jsonb_build_object('n', i, 'tag', 'b') end,
        case when i % 4 = 0 then jsonb_build_object('was', i) else null end,
        ${new Date(t0).toISOString()}::timestamptz + make_interval(mins => i)
      from generate_series(1, 600) as i`);
  });


  const at = (minutes: number): string => new Date(t0 + minutes * 60_000).toISOString();
  const requests: [string, ListRequest][] = [
    ['m-0', { query: {} }],
    ['m-1', { query: {} }],
    ['m-0', { query: { limit: '20' }, where: { event_type: { $in: ['UserCreated', 'TokenGenerated'] } } }],
    ['m-1', { query: { limit: '20' }, where: { event_type: { $in: ['UserUpdated', 'UserDeleted'] } } }],
    ['m-0', { query: { limit: '7', skip: '13' }, where: { event_type: { $in: ['UserCreated', 'TokenVerified'] } } }],
    ['m-0', { query: { limit: '20' }, where: { event_type: { $in: ['UserCreated', 'TokenGenerated', 'TokenVerified'] } } }],
    ['m-0', { query: { limit: '5' }, where: { event_type: 'UserCreated' } }],
    ['m-1', { query: { limit: '9', skip: '3' }, where: { event_type: 'TokenVerified' } }],
    ['m-0', { query: {}, where: { event_time: { $gte: at(100), $lt: at(200) } } }],
    ['m-1', { query: {}, where: { event_time: { $gte: at(301), $lt: at(350) } } }],
    ['m-0', { query: { sort: 'utilizer_id asc' }, where: { utilizer_id: { $in: ['u-1', 'u-2'] } } }],
    ['m-1', { query: { sort: 'utilizer_id asc' }, where: { utilizer_id: { $in: ['u-3', 'u-5'] } } }],
    ['m-0', { query: { sort: 'event_time asc', limit: '30' }, where: { 'document.tag': 'a' } }],
    ['m-0', { query: { sort: 'event_time asc', limit: '30' }, where: { 'document.tag': 'b' } }],
    ['m-1', { query: {}, where: { 'document.n': { $gt: 500 } } }],
    ['m-1', { query: {}, where: { 'document.n': { $gt: 'x' } } }],
    ['m-0', { query: {}, where: { 'document.flag': { $exists: true } } }],
    ['m-0', { query: {}, where: { 'document.flag': { $exists: false } } }],
    ['m-0', { query: {}, where: { prior: null } }],
    ['m-0', { query: {}, where: { prior: { $ne: null } } }],
    ['m-1', { query: {}, where: { $or: [{ utilizer_id: 'u-1' }, { 'document.tag': 'a', event_type: 'UserCreated' }] } }],
    ['m-1', { query: {}, where: { $or: [{ utilizer_id: 'u-4' }, { 'document.tag': 'b', event_type: 'UserDeleted' }] } }],
    ['m-0', { query: {}, where: { document: { n: 6, tag: 'a', flag: true } } }],
    ['m-0', { query: {}, where: { event_type: { $nin: ['UserCreated'] }, utilizer_id: { $ne: 'u-2' } } }],
    ['m-0', { query: {}, where: { event_type: { $in: [] } } }],
    ['m-0', { query: { limit: '10' }, hiddenIds: ['ls-2', 'ls-4', 'ls-6'] }],
    ['m-0', { query: { limit: '10' }, hiddenIds: ['ls-8', 'ls-10', 'ls-12'] }],
    ['m-0', { query: { limit: '10' }, hiddenIds: ['ls-14'] }],
    ['m-1', { query: { limit: '10' }, where: { event_type: { $in: ['UserCreated', 'UserUpdated'] } }, hiddenIds: ['ls-1', 'ls-3'] }],
  ];

  it('answers what a statement built for each request answers, first and second time', async () => {
    const statements = new ListStatements(database().db);
    let answered = 0;
    for (let pass = 0; pass < 2; pass++) {
      for (const [membershipId, request] of requests) {
        const built = await runListQuery(eventListQuery(database().db, membershipId, request));
        if (built.items.length) answered++;
        const reused = await runListQuery(eventListQuery(database().db, membershipId, request, statements));
        expect({ membershipId, request, items: reused.items }).toEqual({ membershipId, request, items: built.items });
      }
    }
    // Only `$in: []` and `$gt: "x"` on a number find nothing.
    expect(answered).toBe(2 * (requests.length - 2));
    // Requests of one shape shared a statement: fewer statements than requests.
    expect(statements.size).toBeGreaterThan(0);
    expect(statements.size).toBeLessThan(requests.length);
  });

  it('gives each request of a shape its own values when they run at once', async () => {
    const statements = new ListStatements(database().db);
    const pairs = await Promise.all(
      requests.map(async ([membershipId, request]) => ({
        built: await runListQuery(eventListQuery(database().db, membershipId, request)),
        reused: await runListQuery(eventListQuery(database().db, membershipId, request, statements)),
      })),
    );
    for (const { built, reused } of pairs) expect(reused.items).toEqual(built.items);
  });

  it('answers alike through Drizzle rows and toResponse for a resource without readRow', async () => {
    const statements = new ListStatements(database().db);
    for (let pass = 0; pass < 2; pass++) {
      for (const [membershipId, request] of requests) {
        const built = await runListQuery(eventListQuery(database().db, membershipId, request));
        const reused = await runListQuery({ ...eventListQuery(database().db, membershipId, request, statements), readRow: undefined });
        expect({ membershipId, request, items: reused.items }).toEqual({ membershipId, request, items: built.items });
      }
    }
    expect(statements.size).toBeGreaterThan(0);
  });

  it('reads the columns in the order the table declares them', () => {
    expect(Object.keys(getTableColumns(events))).toEqual([...EVENT_ROW_COLUMNS]);
  });

  it('reads microseconds, an offset and a null prior as Drizzle does', async () => {
    await database().db.execute(sql`
      insert into ${events} (id, membership_id, event_type, utilizer_id, document, prior, event_time) values
        ('ls-us-1', 'm-us', 'UserCreated', 'u-1', '{"a": [1, {"b": null}], "s": "é ✓"}'::jsonb, null, '2026-03-04 05:06:07.891234+02:30'),
        ('ls-us-2', 'm-us', 'UserUpdated', 'u-1', '{}'::jsonb, '{"was": 1}'::jsonb, '1999-12-31 23:59:59.9995+00')`);
    const statements = new ListStatements(database().db);
    const request: ListRequest = { query: { sort: 'event_time asc' } };
    for (let pass = 0; pass < 2; pass++) {
      const built = await runListQuery(eventListQuery(database().db, 'm-us', request));
      const reused = await runListQuery(eventListQuery(database().db, 'm-us', request, statements));
      expect(reused.items).toEqual(built.items);
      expect(reused.items.map((item) => item.event_time)).toEqual(['1999-12-31T23:59:59.999Z', '2026-03-04T02:36:07.891Z']);
      expect(reused.items.map((item) => item.prior)).toEqual([{ was: 1 }, null]);
    }
  });

  it('names the statement of a split `$in` read by its index alone, and no other', async () => {
    const statements = new ListStatements(database().db);
    // Two at once, so that each connection of the test's pool (two on the server) runs it.
    const twice = (request: ListRequest) =>
      Promise.all(['m-0', 'm-1'].map((membershipId) => runListQuery(eventListQuery(database().db, membershipId, request, statements))));
    await twice({ query: {}, where: { event_type: { $in: ['UserCreated', 'UserDeleted'] } } });
    // More than the types, or hidden ids: the values may change the plan, so unnamed as before.
    await twice({ query: {}, where: { event_type: { $in: ['UserCreated', 'UserDeleted'] }, utilizer_id: 'u-1' } });
    await twice({ query: {}, where: { event_type: { $in: ['UserCreated', 'UserDeleted'] } }, hiddenIds: ['ls-1'] });
    await twice({ query: {}, where: { utilizer_id: { $in: ['u-1', 'u-2'] } } });
    await twice({ query: {} });
    expect(statements.size).toBe(5);

    const rows = await queryRows<{ statement: string }>(database().db, sql`select statement from pg_prepared_statements where name like 'list_page_%'`);
    // The embedded database's driver sends every statement unnamed: there the names change nothing.
    expect(rows.length > 0).toBe(serverUrl() !== undefined);
    for (const { statement } of rows) {
      expect(statement).toMatch(/union all/);
      expect(statement).not.toMatch(/utilizer_id" =|not in/);
    }
  });

  it('answers the same errors for a malformed request', async () => {
    const statements = new ListStatements(database().db);
    const bad: ListRequest = { query: {}, where: { event_type: { $regex: 'x' } } };
    await expect(runListQuery(eventListQuery(database().db, 'm-0', bad, statements))).rejects.toMatchObject({ code: 'InvalidQuery' });
    expect(statements.size).toBe(0);
  });
});
