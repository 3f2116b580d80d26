#!/usr/bin/env node
/**
 * Cost as data grows (`npm run bench -- --scale`, or `node bench/scale.mjs`): one membership is
 * filled, by bulk SQL and not over HTTP, with 10k, 100k and 1M events and 1k, 10k and 100k users
 * (the steps of SCALE_STEPS), and at each size the bench measures, with autocannon:
 *  - events `_query` by type and time range, GET /events newest first;
 *  - users `_query` by username and by e-mail address;
 *  - sign-in (argon2id: few connections) and /me.
 * It prints the p50 of each per size, and the ratio of the largest size's p50 to the smallest's.
 * A second membership, the reference, holds the smallest size throughout, in the same tables; each
 * query runs against both in alternating slices, and the bench prints the reference's p50 of the
 * same minutes and the largest size's ratio to it: the machine's drift between sizes taken out.
 * After each fill VACUUM (ANALYZE) and a CHECKPOINT run before anything is measured: a service
 * that grew that much over months has been vacuumed and analysed, and has no bulk load's dirty
 * pages or hint bits left to write. Without them autovacuum's pass over a million fresh rows and
 * the load's checkpoint ran inside the measurements (a 2-core machine: they took CPU from the
 * service), and the largest size looked slower than it serves.
 * Sign-in and /me, whose target is flatness (within 10%), are measured for SCALE_FLAT_SECONDS.
 * Every query runs once, unmeasured, before the first size: the service starts cold.
 *
 * Needs the PostgreSQL server (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres):
 * it creates a database of its own and drops it at the end; everything it starts is stopped.
 * Environment: SCALE_STEPS ("10000:1000,100000:10000,1000000:100000", events:users per step),
 * SCALE_SECONDS (per query and size, 3), SCALE_FLAT_SECONDS (sign-in and /me, 8), SCALE_CONNECTIONS (16; sign-in uses 4),
 * SCALE_ONLY (comma-separated query names, to measure some of them only: "/me,sign-in"), BENCH_MAIN.
 * Figures, not a gate.
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import { call, cleanUpOnSignals, cpuSecondsOf, createDatabase, freePort, logAs, MAIN, namesFrom, onCleanup, postgresCpuSeconds, runMain, SERVER_URL, start, waitFor } from './support.mjs';

const SECONDS = Number(process.env.SCALE_SECONDS ?? 3);
const FLAT_SECONDS = Number(process.env.SCALE_FLAT_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.SCALE_CONNECTIONS ?? 16);
const ONLY = namesFrom(process.env.SCALE_ONLY);
/** Alternating slices of the grown and the reference membership per query and size. */
const ROUNDS = 4;
const STEPS = (process.env.SCALE_STEPS ?? '10000:1000,100000:10000,1000000:100000').split(',').map((step) => {
  const [events, users] = step.split(':').map(Number);
  return { events, users };
});
const PASSWORD = 'bench password 0123';
const SETUP_TOKEN = randomBytes(24).toString('hex');
const TYPES = ['UserCreated', 'UserUpdated', 'UserDeleted', 'TokenGenerated', 'TokenVerified', 'TokenRefreshed', 'TokenRevoked', 'RoleCreated'];
/**
 * Events come at one steady rate, newest first, so that 1M of them span the last 30 days: each
 * size adds older history, as a tenant's log grows, and the first 10k span the last 7.2 hours.
 * A time range must lie inside that for every size to find the same number of events in it.
 */
const SPAN_SECONDS = 30 * 24 * 3600;
const EVENTS_IN_SPAN = 1_000_000;
/** The time range of "events by type+range": one hour, inside the 7.2 hours every size holds. */
const RANGE_FROM_HOURS_AGO = 2;
const RANGE_TO_HOURS_AGO = 1;

const log = logAs('scale');
/** The service's process, whose CPU time per request each slice reads from /proc. */
let servicePid;

async function startService(databaseUrl) {
  const port = await freePort();
  const service = start(
    'the service',
    ['--max-semi-space-size=32', MAIN],
    { HOST: '127.0.0.1', PORT: String(port), NODE_ENV: 'production', LOG_LEVEL: 'warn', SETUP_TOKEN, DATABASE_URL: databaseUrl },
    { stderr: 'inherit' },
  );
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/ping`, {}, 60_000, service);
  servicePid = service.child.pid;
  return base;
}

/** Events up to `total` in the membership, by one INSERT ... SELECT per step (types round-robin, at the steady rate above). */
async function fillEvents(client, tenant, from, total) {
  await client.query(
    `insert into events (id, membership_id, event_type, utilizer_id, document, prior, event_time)
     select $8::text || '-ev-' || i, $1, ($2::text[])[1 + i % $3], $8::text || '-user-' || (i % 1000), jsonb_build_object('n', i), null,
       now() - make_interval(secs => $4::float8 * i / $5)
     from generate_series($6::int, $7::int) as i`,
    [tenant.id, TYPES, TYPES.length, SPAN_SECONDS, EVENTS_IN_SPAN, from + 1, total, tenant.prefix],
  );
}

/** Users up to `total`: copies of the tenant's template user (its password hash too, so any of them can sign in). */
async function fillUsers(client, tenant, from, total) {
  const { rows } = await client.query(`select column_name from information_schema.columns where table_name = 'users' order by ordinal_position`);
  const overrides = {
    id: `$4::text || '-user-' || i`,
    username: `$4::text || '-user-' || i`,
    email_address: `$4::text || '-user-' || i || '@example.com'`,
    created_at: `now() - make_interval(secs => i)`,
  };
  const columns = rows.map((row) => row.column_name);
  const values = columns.map((column) => overrides[column] ?? `t.${column}`);
  await client.query(
    `insert into users (${columns.join(', ')}) select ${values.join(', ')} from users t, generate_series($2::int, $3::int) as i where t.id = $1`,
    [tenant.templateId, from + 1, total, tenant.prefix],
  );
}

/** A tenant's events and users grown to `size` (never shrunk); `tenant.size` is what it holds. */
async function grow(client, tenant, size) {
  if (size.events > tenant.size.events) await fillEvents(client, tenant, tenant.size.events, size.events);
  if (size.users > tenant.size.users) await fillUsers(client, tenant, tenant.size.users, size.users);
  tenant.size = { events: Math.max(tenant.size.events, size.events), users: Math.max(tenant.size.users, size.users) };
}

/**
 * Latencies of the 2xx answers, in fractions of a millisecond. autocannon's own `latency.p50`
 * comes from a histogram of whole milliseconds: at the 5 to 6 ms of /me, one step of it is 20%,
 * twice the flatness target. Its `response` event hands each answer's time unrounded.
 */
async function slice(options, seconds) {
  const latencies = [];
  const cpuBefore = cpuSecondsOf(servicePid);
  const postgresBefore = postgresCpuSeconds();
  const run = autocannon({ connections: CONNECTIONS, ...options, duration: seconds });
  run.on('response', (_client, statusCode, _bytes, milliseconds) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(milliseconds);
  });
  const result = await run;
  if (result.non2xx || result.errors) log(`${options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return {
    latencies,
    requests: result.requests.total,
    seconds: result.duration,
    bad: result.non2xx + result.errors,
    cpuSeconds: cpuSecondsOf(servicePid) - cpuBefore,
    postgresSeconds: postgresCpuSeconds() - postgresBefore,
  };
}

/** Slices as one figure: p50 over every answer, the rate over all of them. */
function merged(slices) {
  const latencies = slices.flatMap((one) => one.latencies).sort((a, b) => a - b);
  const sum = (field) => slices.reduce((total, one) => total + one[field], 0);
  const perRequestUs = (field) => (1e6 * sum(field)) / Math.max(1, sum('requests'));
  return {
    p50: latencies.length ? latencies[Math.floor(latencies.length / 2)] : Number.NaN,
    rps: sum('requests') / sum('seconds'),
    bad: sum('bad'),
    cpuUs: perRequestUs('cpuSeconds'),
    pgUs: perRequestUs('postgresSeconds'),
  };
}

/**
 * One query at one size: the grown tenant's and the reference tenant's in ROUNDS alternating
 * slices, each warmed up first. The machine is shared, and its speed moved by half within the
 * minutes a scale run takes (one run's largest size was slower by 1.45× at sign-in, which does not
 * read the grown tables); the reference, measured in the same minute, says how much of a ratio
 * is the machine.
 */
async function paired(grownOptions, referenceOptions, seconds) {
  await slice(referenceOptions, 1);
  await slice(grownOptions, 1);
  const grown = [];
  const reference = [];
  for (let round = 0; round < ROUNDS; round++) {
    reference.push(await slice(referenceOptions, seconds / ROUNDS));
    grown.push(await slice(grownOptions, seconds / ROUNDS));
  }
  return { grown: merged(grown), reference: merged(reference) };
}

/** An Authorization header for a user of the tenant. */
async function signIn(base, tenantId, username) {
  const tokens = await call(base, 'POST', '/generate-token', { headers: { 'x-service-alias': tenantId }, body: { username, password: PASSWORD } });
  return `Bearer ${tokens.access_token}`;
}

/**
 * Through the API, as in any tenant, with its admin `<prefix>-admin`: a role that reads users
 * and events, and its template user, signed in (the bearer of every query).
 */
async function provision(base, tenantId, prefix) {
  const admin = await signIn(base, tenantId, `${prefix}-admin`);
  await call(base, 'POST', `/memberships/${tenantId}/roles`, { auth: admin, body: { name: 'Scale reader', slug: 'scale-reader', permissions: ['users.read', 'events.read'] } });
  const template = await call(base, 'POST', `/memberships/${tenantId}/users`, {
    auth: admin,
    body: { username: `${prefix}-template`, email_address: `${prefix}-template@example.com`, password: PASSWORD, role: 'scale-reader' },
  });
  const bearer = await signIn(base, tenantId, `${prefix}-template`);
  return { id: tenantId, prefix, templateId: template._id, bearer, size: { events: 0, users: 0 } };
}

/** The number of items a list query answers (undefined for the others). */
async function itemsOf({ url, method = 'GET', headers, body }) {
  const response = await fetch(url, { method, headers, body });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${JSON.stringify(answer)}`);
  return Array.isArray(answer.items) ? answer.items.length : undefined;
}

/**
 * Every list query finds as many items in the grown membership as in the reference, and some:
 * a ratio of two pages of different lengths would measure the page, not the data's growth (an
 * earlier time range lay outside the reference's events, and compared 20 items with none).
 */
async function checkSameAnswers(grownQueries, referenceQueries) {
  for (const name of Object.keys(grownQueries)) {
    const [grown, reference] = [await itemsOf(grownQueries[name]), await itemsOf(referenceQueries[name])];
    if (grown !== reference || grown === 0) throw new Error(`${name}: ${grown} items in the grown membership, ${reference} in the reference`);
  }
}

/** What autocannon is given of a query (its `seconds` is ours). */
const requestOf = ({ seconds: _seconds, ...request }) => request;

/** The measured requests against one tenant at its current size (`seconds`: how long, when not SECONDS). */
function queriesOf(base, tenant) {
  const json = { 'content-type': 'application/json' };
  const hoursAgo = (hours) => new Date(Date.now() - hours * 3600_000).toISOString();
  const middle = `${tenant.prefix}-user-${Math.floor(tenant.size.users / 2)}`;
  const m = tenant.id;
  const queries = {
    'events by type+range': {
      url: `${base}/memberships/${m}/events/_query?limit=20`,
      method: 'POST',
      headers: { ...json, authorization: tenant.bearer },
      body: JSON.stringify({ where: { event_type: 'TokenVerified', event_time: { $gte: hoursAgo(RANGE_FROM_HOURS_AGO), $lt: hoursAgo(RANGE_TO_HOURS_AGO) } } }),
    },
    'GET /events': { url: `${base}/memberships/${m}/events?limit=20`, headers: { authorization: tenant.bearer } },
    'users by username': {
      url: `${base}/memberships/${m}/users/_query`,
      method: 'POST',
      headers: { ...json, authorization: tenant.bearer },
      body: JSON.stringify({ where: { username: middle } }),
    },
    'users by e-mail': {
      url: `${base}/memberships/${m}/users/_query`,
      method: 'POST',
      headers: { ...json, authorization: tenant.bearer },
      body: JSON.stringify({ where: { email_address: `${middle}@example.com` } }),
    },
    'sign-in': {
      url: `${base}/generate-token`,
      method: 'POST',
      headers: { ...json, 'x-service-alias': m },
      body: JSON.stringify({ username: middle, password: PASSWORD }),
      connections: 4,
      seconds: FLAT_SECONDS,
    },
    '/me': { url: `${base}/me`, headers: { authorization: tenant.bearer }, seconds: FLAT_SECONDS },
  };
  return ONLY ? Object.fromEntries(Object.entries(queries).filter(([name]) => ONLY.has(name))) : queries;
}

async function main() {
  const databaseUrl = await createDatabase(SERVER_URL, 'portcullis_scale');
  const base = await startService(databaseUrl);
  const setup = await call(base, 'POST', '/setup', {
    headers: { 'x-setup-token': SETUP_TOKEN },
    body: {
      membership: { name: 'Scale' },
      user: { username: 'scale-admin', email_address: 'scale-admin@example.com', password: PASSWORD },
      application: { name: 'scale-app' },
    },
  });
  // The reference tenant, beside the grown one in the same tables: its own ids, users and reader.
  const created = await call(base, 'POST', '/memberships', {
    auth: await signIn(base, setup.membership._id, 'scale-admin'),
    body: { membership: { name: 'Scale reference' }, user: { username: 'ref-admin', email_address: 'ref-admin@example.com', password: PASSWORD } },
  });
  const grownTenant = await provision(base, setup.membership._id, 'scale');
  const reference = await provision(base, created.membership._id, 'ref');

  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  onCleanup(() => client.end());
  await grow(client, reference, STEPS[0]);
  const rows = [];
  for (const step of STEPS) {
    log(`filling to ${step.events} events and ${step.users} users ...`);
    const filled = Date.now();
    await grow(client, grownTenant, step);
    await client.query('vacuum (analyze) events, users');
    await client.query('checkpoint');
    log(`filled in ${((Date.now() - filled) / 1000).toFixed(0)} s; measuring ...`);
    const grownQueries = queriesOf(base, grownTenant);
    const referenceQueries = queriesOf(base, reference);
    await checkSameAnswers(grownQueries, referenceQueries);
    // Before the first size, every query once unmeasured: the service has just started, and its
    // code still in V8's baseline tiers made the smallest size look slower than the largest.
    if (rows.length === 0) for (const name of Object.keys(grownQueries)) await slice(requestOf(grownQueries[name]), 2);
    const measured = {};
    for (const name of Object.keys(grownQueries)) {
      measured[name] = await paired(requestOf(grownQueries[name]), requestOf(referenceQueries[name]), grownQueries[name].seconds ?? SECONDS);
      const { grown, reference: beside } = measured[name];
      log(`${name}: cpu µs per request ${grown.cpuUs.toFixed(0)} (reference ${beside.cpuUs.toFixed(0)}), pg µs ${grown.pgUs.toFixed(0)} (reference ${beside.pgUs.toFixed(0)})`);
    }
    rows.push({ ...step, measured });
  }

  const names = Object.keys(rows[0].measured);
  const width = 20;
  const cell = ({ p50, rps, bad }) => `${p50.toFixed(1)} (${Math.round(rps)})${bad ? '!' : ''}`.padStart(width);
  const ratioRow = (label, ratioOf) => `${label.padEnd(18)}${names.map((name) => `${ratioOf(name).toFixed(2)}x`.padStart(width)).join('')}`;
  const first = rows[0].measured;
  const last = rows.at(-1).measured;
  const lines = [
    `Portcullis scale bench: one membership grown, beside a reference membership of ${STEPS[0].events} events and ${STEPS[0].users} users in the same tables, ` +
      `${ROUNDS} alternating slices of each, ${SECONDS} s per query and size in all (sign-in and /me ${FLAT_SECONDS} s), ${CONNECTIONS} connections (sign-in 4); p50 ms (req/s)`,
    '',
    `${'events / users'.padEnd(18)}${names.map((name) => name.padStart(width)).join('')}`,
    ...rows.map((row) => `${`${row.events} / ${row.users}`.padEnd(18)}${names.map((name) => cell(row.measured[name].grown)).join('')}`),
    ratioRow('largest/smallest', (name) => last[name].grown.p50 / first[name].grown.p50),
    `the reference membership, in the same minutes:`,
    ...rows.map((row) => `${`  beside ${row.events}`.padEnd(18)}${names.map((name) => cell(row.measured[name].reference)).join('')}`),
    ratioRow('largest/reference', (name) => last[name].grown.p50 / last[name].reference.p50),
    ratioRow('  cpu µs, same', (name) => last[name].grown.cpuUs / last[name].reference.cpuUs),
    ratioRow('  pg µs, same', (name) => last[name].grown.pgUs / last[name].reference.pgUs),
    '',
    'largest/smallest: p50 at the largest size over p50 at the smallest, minutes apart; largest/reference: over the',
    'reference membership in the same minute (the machine\'s drift taken out; both read the same, larger tables);',
    'cpu µs and pg µs, same: the CPU time per request of the service and of PostgreSQL, largest size over the reference.',
    '! = some answers were not 2xx (see the log)',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

cleanUpOnSignals('the scale bench');
await runMain(main);
