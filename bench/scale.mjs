#!/usr/bin/env node
/**
 * Cost as data grows (`npm run bench -- --scale`, or `node bench/scale.mjs`): one membership is
 * filled, by bulk SQL and not over HTTP, with 10k, 100k and 1M events and 1k, 10k and 100k users
 * (the steps of SCALE_STEPS), and at each size the bench measures, with autocannon:
 *  - events `_query` by type and time range, GET /events newest first;
 *  - users `_query` by username and by e-mail address;
 *  - sign-in (argon2id: few connections) and /me.
 * It prints the p50 of each per size, and the ratio of the largest size's p50 to the smallest's.
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
 * SCALE_SECONDS (per query and size, 3), SCALE_FLAT_SECONDS (sign-in and /me, 8), SCALE_CONNECTIONS (16; sign-in uses 4), BENCH_MAIN.
 * Figures, not a gate.
 */
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import pg from 'pg';
import { call, cleanUpOnSignals, createDatabase, freePort, logAs, MAIN, onCleanup, runMain, SERVER_URL, start, waitFor } from './support.mjs';

const SECONDS = Number(process.env.SCALE_SECONDS ?? 3);
const FLAT_SECONDS = Number(process.env.SCALE_FLAT_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.SCALE_CONNECTIONS ?? 16);
const STEPS = (process.env.SCALE_STEPS ?? '10000:1000,100000:10000,1000000:100000').split(',').map((step) => {
  const [events, users] = step.split(':').map(Number);
  return { events, users };
});
const PASSWORD = 'bench password 0123';
const SETUP_TOKEN = randomBytes(24).toString('hex');
const TYPES = ['UserCreated', 'UserUpdated', 'UserDeleted', 'TokenGenerated', 'TokenVerified', 'TokenRefreshed', 'TokenRevoked', 'RoleCreated'];
/** Fill events over the last 30 days, spaced evenly, so that "the last day" is a thirtieth of them. */
const SPAN_SECONDS = 30 * 24 * 3600;

const log = logAs('scale');

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
  return base;
}

/** Events up to `total` in the membership, by one INSERT ... SELECT per step (types round-robin, times spread over 30 days). */
async function fillEvents(client, membershipId, from, total) {
  await client.query(
    `insert into events (id, membership_id, event_type, utilizer_id, document, prior, event_time)
     select 'scale-ev-' || i, $1, ($2::text[])[1 + i % $3], 'scale-user-' || (i % 1000), jsonb_build_object('n', i), null,
       now() - make_interval(secs => $4::float8 * i / $5)
     from generate_series($6::int, $7::int) as i`,
    [membershipId, TYPES, TYPES.length, SPAN_SECONDS, 1_000_000, from + 1, total],
  );
}

/** Users up to `total`: copies of a template user (its password hash too, so any of them can sign in). */
async function fillUsers(client, templateId, from, total) {
  const { rows } = await client.query(`select column_name from information_schema.columns where table_name = 'users' order by ordinal_position`);
  const overrides = {
    id: `'scale-user-' || i`,
    username: `'scale-user-' || i`,
    email_address: `'scale-user-' || i || '@example.com'`,
    created_at: `now() - make_interval(secs => i)`,
  };
  const columns = rows.map((row) => row.column_name);
  const values = columns.map((column) => overrides[column] ?? `t.${column}`);
  await client.query(
    `insert into users (${columns.join(', ')}) select ${values.join(', ')} from users t, generate_series($2::int, $3::int) as i where t.id = $1`,
    [templateId, from + 1, total],
  );
}

async function p50Of({ seconds = SECONDS, ...options }) {
  await autocannon({ connections: CONNECTIONS, ...options, duration: 1 });
  const result = await autocannon({ connections: CONNECTIONS, ...options, duration: seconds });
  if (result.non2xx || result.errors) log(`${options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { p50: result.latency.p50, rps: result.requests.average, bad: result.non2xx + result.errors };
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
  const m = setup.membership._id;
  const signIn = (username) => call(base, 'POST', '/generate-token', { headers: { 'x-service-alias': m }, body: { username, password: PASSWORD } });
  const admin = await signIn('scale-admin');
  const adminAuth = `Bearer ${admin.access_token}`;
  await call(base, 'POST', `/memberships/${m}/roles`, { auth: adminAuth, body: { name: 'Scale reader', slug: 'scale-reader', permissions: ['users.read', 'events.read'] } });
  const template = await call(base, 'POST', `/memberships/${m}/users`, {
    auth: adminAuth,
    body: { username: 'scale-template', email_address: 'scale-template@example.com', password: PASSWORD, role: 'scale-reader' },
  });
  const reader = await signIn('scale-template');
  const bearer = `Bearer ${reader.access_token}`;
  const json = { 'content-type': 'application/json' };

  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  onCleanup(() => client.end());
  const rows = [];
  let events = 0;
  let users = 0;
  for (const step of STEPS) {
    log(`filling to ${step.events} events and ${step.users} users ...`);
    const filled = Date.now();
    if (step.events > events) await fillEvents(client, m, events, step.events);
    if (step.users > users) await fillUsers(client, template._id, users, step.users);
    events = Math.max(events, step.events);
    users = Math.max(users, step.users);
    await client.query('vacuum (analyze) events, users');
    await client.query('checkpoint');
    log(`filled in ${((Date.now() - filled) / 1000).toFixed(0)} s; measuring ...`);
    const dayAgo = new Date(Date.now() - 24 * 3600_000).toISOString();
    const twoDaysAgo = new Date(Date.now() - 48 * 3600_000).toISOString();
    const middle = `scale-user-${Math.floor(users / 2)}`;
    const queries = {
      'events by type+range': {
        url: `${base}/memberships/${m}/events/_query?limit=20`,
        method: 'POST',
        headers: { ...json, authorization: bearer },
        body: JSON.stringify({ where: { event_type: 'TokenVerified', event_time: { $gte: twoDaysAgo, $lt: dayAgo } } }),
      },
      'GET /events': { url: `${base}/memberships/${m}/events?limit=20`, headers: { authorization: bearer } },
      'users by username': {
        url: `${base}/memberships/${m}/users/_query`,
        method: 'POST',
        headers: { ...json, authorization: bearer },
        body: JSON.stringify({ where: { username: middle } }),
      },
      'users by e-mail': {
        url: `${base}/memberships/${m}/users/_query`,
        method: 'POST',
        headers: { ...json, authorization: bearer },
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
      '/me': { url: `${base}/me`, headers: { authorization: bearer }, seconds: FLAT_SECONDS },
    };
    // Before the first size, every query once unmeasured: the service has just started, and its
    // code still in V8's baseline tiers made the smallest size look slower than the largest.
    if (rows.length === 0) for (const options of Object.values(queries)) await p50Of({ ...options, seconds: 2 });
    const measured = {};
    for (const [name, options] of Object.entries(queries)) measured[name] = await p50Of(options);
    rows.push({ events, users, measured });
  }

  const names = Object.keys(rows[0].measured);
  const width = 20;
  const lines = [
    `Portcullis scale bench: one membership, ${SECONDS} s per query and size (sign-in and /me ${FLAT_SECONDS} s) after 1 s warm-up, ${CONNECTIONS} connections (sign-in 4); p50 ms (req/s)`,
    '',
    `${'events / users'.padEnd(18)}${names.map((name) => name.padStart(width)).join('')}`,
  ];
  for (const row of rows) {
    const cells = names.map((name) => {
      const { p50, rps, bad } = row.measured[name];
      return `${p50} (${Math.round(rps)})${bad ? '!' : ''}`.padStart(width);
    });
    lines.push(`${`${row.events} / ${row.users}`.padEnd(18)}${cells.join('')}`);
  }
  const first = rows[0].measured;
  const last = rows.at(-1).measured;
  lines.push(`${'largest/smallest'.padEnd(18)}${names.map((name) => `${(last[name].p50 / Math.max(1, first[name].p50)).toFixed(2)}x`.padStart(width)).join('')}`);
  lines.push('', '! = some answers were not 2xx (see the log)');
  process.stdout.write(`${lines.join('\n')}\n`);
}

cleanUpOnSignals('the scale bench');
await runMain(main);
