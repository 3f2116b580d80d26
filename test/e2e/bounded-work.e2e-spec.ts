import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { JSON_BODY_LIMITS } from '../../src/common/json-budget';
import { DATABASE, type Database } from '../../src/database/database';
import { MembershipCache } from '../../src/memberships/membership-cache';
import type { TestApp } from '../support/app';
import { bootInstallation, expectErrorBody, type Installation, webhookBody, webhooksPath } from '../support/api';
import { describeWithServer } from '../support/instances';

/**
 * Contract, "Bounded work and per-object rules": the key and depth budget of request bodies,
 * ids checked before lookups, and bounded caches.
 */
describe('bounded work per request', () => {
  /**
   * The bound, set low so that the unknown ids below pass it twenty times over: 20,000 requests
   * against the default bound of 10,000 took over 300 s on the shared test machine (each one is
   * a token check and a membership lookup), so bound and count are scaled down together.
   */
  const CACHE_MAX_ENTRIES = 20;
  const UNKNOWN_IDS = 20 * CACHE_MAX_ENTRIES;
  let t: TestApp;
  let inst: Installation;

  beforeAll(async () => ({ t, inst } = await bootInstallation({ env: { CACHE_MAX_ENTRIES: String(CACHE_MAX_ENTRIES) } })));
  afterAll(async () => {
    await t?.close();
  });

  /** An object of `count` distinct keys, as JSON text. */
  const manyKeys = (count: number): string => `{${Array.from({ length: count }, (_, i) => `"k${i}":1`).join(',')}}`;
  /** Objects nested `depth` levels deep (the outermost is level 1), as JSON text. */
  const nested = (depth: number): string => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;

  function postRaw(path: string, body: string, headers: Record<string, string> = {}) {
    const req = t.http().post(path).set('Content-Type', 'application/json');
    for (const [name, value] of Object.entries(headers)) req.set(name, value);
    return req.send(body);
  }

  function expectBudgetError(res: { status: number; body: Record<string, unknown> }, message: RegExp): void {
    expectErrorBody(res as Parameters<typeof expectErrorBody>[0], 400, 'ModelValidationError');
    expect(res.body.errors).toEqual([{ field: 'request.body', message: expect.stringMatching(message) }]);
  }

  describe('request bodies: at most 1000 keys and depth 32, counted while parsing', () => {
    it('refuses 90,000 keys on /generate-token (no token) with 400 ModelValidationError', async () => {
      const res = await postRaw('/generate-token', manyKeys(90_000), { 'X-Service-Alias': inst.admin.membershipId });
      expectBudgetError(res, /at most 1000 keys/);
    });

    it('refuses 90,000 keys on a membership route with 400 ModelValidationError', async () => {
      const res = await postRaw(`/memberships/${inst.admin.membershipId}/users`, manyKeys(90_000), { Authorization: inst.admin.auth });
      expectBudgetError(res, /at most 1000 keys/);
    });

    it('refuses 90,000 keys in a _query body', async () => {
      const where = manyKeys(90_000);
      const res = await postRaw(`/memberships/${inst.admin.membershipId}/users/_query`, `{"where":${where}}`, { Authorization: inst.admin.auth });
      expectBudgetError(res, /at most 1000 keys/);
    });

    it.each([
      ['/generate-token', {}],
      ['/verify-token', {}],
      ['/refresh-token', {}],
      ['user types', { authorized: true }],
      ['webhooks', { authorized: true }],
    ])('refuses a body nested 10,000 deep on %s with 400, not 500', async (name, { authorized }: { authorized?: boolean }) => {
      const m = inst.admin.membershipId;
      const path = name === 'user types' ? `/memberships/${m}/user-types` : name === 'webhooks' ? webhooksPath(m) : name;
      const headers: Record<string, string> = authorized ? { Authorization: inst.admin.auth } : { 'X-Service-Alias': m };
      const res = await postRaw(path, nested(10_000), headers);
      expectBudgetError(res, /nested at most 32 levels/);
    });

    it('refuses a deep array as well as a deep object', async () => {
      // Inside an object: a top-level array is refused as not an object before its depth is counted.
      const res = await postRaw('/verify-token', `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
      expectBudgetError(res, /nested at most 32 levels/);
    });

    it('does not count what looks like keys or brackets inside strings', async () => {
      // 1500 `"k":{[` inside one string value (escaped quotes included): text, not structure.
      const text = Array.from({ length: 1500 }, (_, i) => `"k${i}":{[`).join('');
      const base = webhookBody('https://hooks.example.com/in');
      const res = await t
        .http()
        .post(webhooksPath(inst.admin.membershipId))
        .set('Authorization', inst.admin.auth)
        .send({ ...base, request: { ...base.request, body: { note: text } } });
      expect(res.status).toBe(201);
    });

    it('accepts exactly 1000 keys where the body is valid (a webhook whose body template takes the rest)', async () => {
      const base = webhookBody('https://hooks.example.com/in');
      const baseKeys = 7 + 1; // name, event, status, try_count, request, method, url + body
      const template = Object.fromEntries(Array.from({ length: JSON_BODY_LIMITS.maxKeys - baseKeys }, (_, i) => [`k${i}`, 'v']));
      const body = { ...base, request: { ...base.request, body: template } };
      const res = await t.http().post(webhooksPath(inst.admin.membershipId)).set('Authorization', inst.admin.auth).send(body);
      expect(res.status).toBe(201);

      const oneMore = { ...base, name: `${base.name}-2`, request: { ...base.request, body: { ...template, extra: 'v' } } };
      const over = await t.http().post(webhooksPath(inst.admin.membershipId)).set('Authorization', inst.admin.auth).send(oneMore);
      expectBudgetError(over, /at most 1000 keys/);
    });

    it('accepts exactly depth 32 where the body is valid (a webhook with a nested body template)', async () => {
      // The request body is level 1, `request` level 2, its `body` level 3: 29 more levels make 32.
      const deepTemplate = (levels: number): Record<string, unknown> => (levels === 0 ? {} : { a: deepTemplate(levels - 1) });
      const base = webhookBody('https://hooks.example.com/in');
      const res = await t
        .http()
        .post(webhooksPath(inst.admin.membershipId))
        .set('Authorization', inst.admin.auth)
        .send({ ...base, request: { ...base.request, body: deepTemplate(JSON_BODY_LIMITS.maxDepth - 3) } });
      expect(res.status).toBe(201);

      const over = await t
        .http()
        .post(webhooksPath(inst.admin.membershipId))
        .set('Authorization', inst.admin.auth)
        .send({ ...base, name: `${base.name}-2`, request: { ...base.request, body: deepTemplate(JSON_BODY_LIMITS.maxDepth - 2) } });
      expectBudgetError(over, /nested at most 32 levels/);
    });

    it('still answers MalformedJson for text that is not JSON', async () => {
      const res = await postRaw('/generate-token', '{"username": ');
      expectErrorBody(res, 400, 'MalformedJson');
    });
  });

  describe('ids before lookups, and a bounded membership cache', () => {
    const cache = (): MembershipCache => t.app.get(MembershipCache);

    // A NUL never reaches routing: input hygiene answers 400 for the URL first (contract, "Hostile input").
    it.each([
      ['over-long', 'm'.repeat(200), 404, 'MembershipNotFound'],
      ['65 characters', 'm'.repeat(65), 404, 'MembershipNotFound'],
      ['outside the id alphabet', 'not.an~id', 404, 'MembershipNotFound'],
      ['with a NUL character', 'abc%00def', 400, 'ModelValidationError'],
    ] as const)('an %s membership id answers %d %s without touching the cache', async (_case, id, status, errorCode) => {
      const before = cache().size;
      expect(before).toEqual(expect.any(Number));
      const res = await t.http().get(`/memberships/${id}/roles`).set('Authorization', inst.admin.auth);
      expectErrorBody(res, status, errorCode);
      expect(cache().size).toBe(before);
    });

    it.each([
      ['over-long', 'r'.repeat(200), 404, 'NotFound'],
      ['with a NUL character', 'abc%00def', 400, 'ModelValidationError'],
    ] as const)('an %s resource id answers %d %s before any lookup', async (_case, id, status, errorCode) => {
      const res = await t.http().get(`/memberships/${inst.admin.membershipId}/roles/${id}`).set('Authorization', inst.admin.auth);
      expectErrorBody(res, status, errorCode);
    });

    it('an ill-formed X-Service-Alias on sign-in answers 404 MembershipNotFound', async () => {
      const res = await t.http().post('/generate-token').set('X-Service-Alias', 'x'.repeat(65)).send({ username: 'a', password: 'p' });
      expectErrorBody(res, 404, 'MembershipNotFound');
    });

    it('a well-formed unknown membership id is remembered as a miss, under its id only', async () => {
      const before = cache().size;
      const res = await t.http().get(`/memberships/${randomUUID()}/roles`).set('Authorization', inst.admin.auth);
      expectErrorBody(res, 404, 'MembershipNotFound');
      expect(cache().size).toBe(before + 1);
    });

    it('distinct unknown membership ids, twenty times the bound, do not grow the cache past it', async () => {
      const total = UNKNOWN_IDS;
      const statuses = new Map<number, number>();
      let sent = 0;
      const worker = async (): Promise<void> => {
        while (sent < total) {
          sent++;
          const res = await fetch(`${t.url}/memberships/${randomUUID()}/roles`, { headers: { authorization: inst.admin.auth } });
          await res.arrayBuffer();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      expect(Object.fromEntries(statuses)).toEqual({ 404: total });
      // Every miss was cached (each id could exist), yet the cache holds no more than its bound.
      expect(cache().size).toBe(CACHE_MAX_ENTRIES);
    }, 120_000);
  });
});

/**
 * `count` UserUpdated events in the membership, one a second back from now, each document
 * `{_id: "<n>", username: "user<n>"}`, then analysed. Bulk work the service never does, so the
 * statement timeout is lifted for it (on the embedded database it is ignored anyway).
 */
async function seedEvents(t: TestApp, membershipId: string, count: number): Promise<void> {
  const { db } = t.app.get<Database>(DATABASE);
  await db.transaction(async (tx) => {
    await tx.execute(sql`set local statement_timeout = 0`);
    await tx.execute(sql`insert into events (id, membership_id, event_type, utilizer_id, document, event_time)
      select gen_random_uuid()::text, ${membershipId}, 'UserUpdated', 'seed', jsonb_build_object('_id', g::text, 'username', 'user' || g), now() - make_interval(secs => g)
      from generate_series(1, ${count}::int) g`);
    await tx.execute(sql`analyze events`);
  });
}

/**
 * A `_query` within every documented limit can still ask the database for minutes of work: 990
 * `$or` conditions on unindexed document paths, each evaluated on every event of the membership
 * (118 s of the server's CPU on a million events). The server's statement timeout bounds any one
 * statement, and the list answers 400 InvalidQuery instead of running on.
 */
describeWithServer('bounded work: the database statement timeout', () => {
  /**
   * The bound and the log are scaled together, far apart: 50,000 events take that query about
   * 6 s on the shared test machine, six times the timeout, and a cheap list stays far below it.
   */
  const STATEMENT_TIMEOUT_MS = 1_000;
  const EVENTS = 50_000;
  let t: TestApp;
  let inst: Installation;

  beforeAll(async () => {
    ({ t, inst } = await bootInstallation({ env: { DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) } }));
    await seedEvents(t, inst.admin.membershipId, EVENTS);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const eventsQuery = () => `/memberships/${inst.admin.membershipId}/events/_query`;

  it('answers 400 InvalidQuery for a filter the database cannot finish within the timeout', async () => {
    // Within the body budget (992 keys) and the filter's node limit (1981 nodes).
    const conditions = Array.from({ length: 990 }, (_, i) => ({ [`document.a${i}.b.c.d.e.f.g.h.i`]: `absent${i}` }));
    const res = await t.http().post(`${eventsQuery()}?limit=1`).set('Authorization', inst.admin.auth).send({ where: { $or: conditions } });
    expectErrorBody(res, 400, 'InvalidQuery');
    expect(res.body.message).toMatch(/more database work than one request may take/);
  });

  it('still answers an indexed query of the same log', async () => {
    const res = await t.http().post(`${eventsQuery()}?limit=5`).set('Authorization', inst.admin.auth).send({ where: { event_type: 'UserUpdated' } });
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(5);
  });
});

/**
 * The embedded database runs statements in the service's own thread and cannot cancel one, so the
 * statement timeout bounds nothing there: a list with conditions no index serves is judged by its
 * plan before it runs (UNCANCELLABLE_QUERY_COST_MAX), as if they matched nothing.
 */
describe('bounded work: a list the embedded database could not stop', () => {
  /** 990 unindexed conditions on these cost the planner about 100,000 units (about 1.7 s of PGlite); one costs about 3,000. */
  const EVENTS = 20_000;
  let t: TestApp;
  let inst: Installation;

  beforeAll(async () => {
    // Embedded in both phases of the suite: the server cancels statements itself (above).
    ({ t, inst } = await bootInstallation({ databaseUrl: 'memory://' }));
    await seedEvents(t, inst.admin.membershipId, EVENTS);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const eventsQuery = (query = 'limit=1') => t.http().post(`/memberships/${inst.admin.membershipId}/events/_query?${query}`).set('Authorization', inst.admin.auth);

  it('answers 400 InvalidQuery, before running it, for a filter of unindexed conditions past the bound', async () => {
    const conditions = Array.from({ length: 990 }, (_, i) => ({ [`document.a${i}.b.c.d.e.f.g.h.i`]: `absent${i}` }));
    const res = await eventsQuery().send({ where: { $or: conditions } });
    expectErrorBody(res, 400, 'InvalidQuery');
    expect(res.body.message).toMatch(/more database work than one request may take/);
  });

  it('still answers an unindexed condition within the bound, its count, and an indexed query', async () => {
    const one = await eventsQuery('limit=2&with_count=true').send({ where: { 'document.username': 'user7' } });
    expect({ status: one.status, count: one.body.count, ids: one.body.items.map((item: { document: { _id: string } }) => item.document._id) }).toEqual({ status: 200, count: 1, ids: ['7'] });
    const indexed = await eventsQuery('limit=5').send({ where: { event_type: 'UserUpdated' } });
    expect({ status: indexed.status, items: indexed.body.items.length }).toEqual({ status: 200, items: 5 });
  });
});
