#!/usr/bin/env node
/**
 * A flame graph of each read route, of refresh, of sign-in and of the floor app (`npm run bench:flame-graphs`,
 * about two minutes; writes docs/flame-graphs/*.svg). Starts the built service on a fresh database on the
 * PostgreSQL server (BENCH_DATABASE_URL, as bench/run.mjs), prepares a membership, an admin and an
 * application, warms every route up, then profiles each route alone for BENCH_DURATION seconds (6)
 * under autocannon's load (16 connections): the service's own CPU profiler runs for that window
 * only (bench/profile-on-signal.cjs), so start-up and preparation are not in it. The floor app
 * (bench/floor-app.mjs) is profiled the same way, for the same route shape. Each profile becomes
 * an SVG with scripts/flame-graph.mjs, its tooltips in CPU microseconds per request.
 * Events `_query` and refresh are drawn beside their own floors (bench/floor-app.mjs).
 * BENCH_ONLY (comma-separated file names, e.g. "events-query,floor-events") draws those alone;
 * BENCH_PROFILE_DIR keeps the .cpuprofile files there (made if missing), one per route under the
 * route's name; the log gives the requests each served, for scripts/profile-summary.mjs (the same
 * profile ranked as text).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import autocannon from 'autocannon';
import pg from 'pg';
import { buildIfMissing, call, cleanUpOnSignals, createDatabase, freePort, logAs, MAIN, namesFrom, onCleanup, ROOT, runMain, SERVER_URL, start, waitFor } from './support.mjs';

const log = logAs('flame-graphs');
const DURATION = Number(process.env.BENCH_DURATION ?? 6);
const SETUP_TOKEN = randomBytes(24).toString('hex');
const PASSWORD = 'bench password 0123';
const OUT = join(ROOT, 'docs', 'flame-graphs');
const PRELOAD = ['--require', join(ROOT, 'bench', 'profile-on-signal.cjs')];
const ONLY = namesFrom(process.env.BENCH_ONLY);
/** The events `_query` body of bench/run.mjs: two types, newest first, 20 of them. */
const EVENTS_QUERY_BODY = JSON.stringify({ where: { event_type: { $in: ['UserCreated', 'TokenGenerated'] } } });

/** Starts `args` with the profiling preload; `profile(load)` runs `load` inside one profiled window. */
async function profiled(name, args, env, url, waitOptions = {}) {
  const file = join(PROFILE_DIR, `${name}.cpuprofile`);
  const entry = start(name, [...PRELOAD, '--max-semi-space-size=32', ...args], { ...env, PROFILE_OUT: file }, { stderr: 'pipe' });
  await waitFor(url, waitOptions, 60_000, entry);
  const written = () =>
    new Promise((resolve, reject) => {
      const onData = (chunk) => {
        const text = chunk.toString();
        const failed = /profile failed: .*/.exec(text);
        if (!failed && !text.includes('profile written')) return;
        entry.child.stderr.off('data', onData);
        if (failed) reject(new Error(`${name}: ${failed[0]}`));
        else resolve();
      };
      entry.child.stderr.on('data', onData);
    });
  return {
    entry,
    async profile(load) {
      entry.child.kill('SIGUSR2');
      const result = await load();
      const done = written();
      entry.child.kill('SIGUSR2');
      await done;
      return { file, result };
    },
  };
}

const scratch = mkdtempSync(join(tmpdir(), 'portcullis-flame-'));
onCleanup(async () => rmSync(scratch, { recursive: true, force: true }));
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR ?? scratch;
mkdirSync(PROFILE_DIR, { recursive: true });

async function main() {
  cleanUpOnSignals('the flame-graph bench');
  buildIfMissing();
  const databaseUrl = await createDatabase(SERVER_URL, 'portcullis_flame');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = await profiled('service', [MAIN], { HOST: '127.0.0.1', PORT: String(port), NODE_ENV: 'production', LOG_LEVEL: 'info', SETUP_TOKEN, DATABASE_URL: databaseUrl }, `${base}/ping`);

  const setup = await call(base, 'POST', '/setup', {
    headers: { 'x-setup-token': SETUP_TOKEN },
    body: { membership: { name: 'Bench' }, user: { username: 'bench-admin', email_address: 'bench-admin@example.com', password: PASSWORD }, application: { name: 'bench-app' } },
  });
  const membership = setup.membership;
  const signIn = () => call(base, 'POST', '/generate-token', { headers: { 'x-service-alias': membership._id }, body: { username: 'bench-admin', password: PASSWORD } });
  const signedIn = await signIn();
  // Events for `_query` to answer: a page of 20 TokenGenerated among them.
  for (let i = 0; i < 24; i += 1) await signIn();
  // As bench/run.mjs: statistics refreshed before each profile, since the routes before it grew the
  // tables (verify-token's TokenVerified events) and this server runs without autovacuum.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  onCleanup(() => client.end());
  const analyze = () => client.query('vacuum (analyze)');
  await analyze();

  const floorPort = await freePort();
  const floor = await profiled(
    'floor',
    [join(ROOT, 'bench', 'floor-app.mjs')],
    { FLOOR_PORT: String(floorPort), FLOOR_SECRET: membership.secret_key, FLOOR_ISSUER: membership.name, FLOOR_AUDIENCE: membership.slug, FLOOR_DATABASE_URL: databaseUrl },
    `http://127.0.0.1:${floorPort}/floor`,
    { headers: { authorization: `Bearer ${signedIn.access_token}` } },
  );

  const bearer = { authorization: `Bearer ${signedIn.access_token}` };
  const refreshBody = JSON.stringify({ token: signedIn.refresh_token });
  const basic = { authorization: `Basic ${setup.application._id}:${setup.application.secret}` };
  const routes = [
    ['verify-token-bearer', 'verify-token Bearer', service, { url: `${base}/verify-token`, headers: bearer }],
    ['verify-token-basic', 'verify-token Basic', service, { url: `${base}/verify-token`, headers: basic }],
    ['me-bearer', '/me Bearer', service, { url: `${base}/me`, headers: bearer }],
    ['me-basic', '/me Basic', service, { url: `${base}/me`, headers: basic }],
    ['check-permission', 'check-permission', service, { url: `${base}/roles/check-permission?permission=users.read`, headers: bearer }],
    ['floor', 'the floor app (Nest, the JWT check, one primary-key lookup)', floor, { url: `http://127.0.0.1:${floorPort}/floor`, headers: bearer }],
    ['events-query', 'events _query (two types, 20 events)', service, { url: `${base}/memberships/${membership._id}/events/_query?limit=20`, method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: EVENTS_QUERY_BODY }],
    ['floor-events', "events _query's floor (the JWT check, the same select as JSON)", floor, { url: `http://127.0.0.1:${floorPort}/floor/events`, method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: EVENTS_QUERY_BODY }],
    ['refresh', 'refresh (revoke=false, one session)', service, { url: `${base}/refresh-token?revoke=false`, method: 'POST', headers: { 'content-type': 'application/json' }, body: refreshBody }],
    ['floor-refresh', "refresh's floor (the JWT check, one transaction of two inserts, two JWTs signed)", floor, { url: `http://127.0.0.1:${floorPort}/floor/refresh`, method: 'POST', headers: { 'content-type': 'application/json' }, body: refreshBody }],
    // The main thread's share of a sign-in (argon2id runs on the thread pool, out of this profile).
    ['sign-in', 'sign-in (password)', service, { url: `${base}/generate-token`, method: 'POST', headers: { 'content-type': 'application/json', 'x-service-alias': membership._id }, body: JSON.stringify({ username: 'bench-admin', password: PASSWORD }), connections: 8 }],
  ].filter(([name]) => ONLY === null || ONLY.has(name));
  // Warm-up: every route compiled by V8's optimizing tier before any profile.
  for (const [, , , options] of routes) await autocannon({ connections: 16, ...options, duration: 3 });

  mkdirSync(OUT, { recursive: true });
  for (const [name, title, target, options] of routes) {
    await analyze();
    const { file, result } = await target.profile(() => autocannon({ connections: 16, ...options, duration: DURATION }));
    if (result.non2xx || result.errors) throw new Error(`${title}: ${result.non2xx} answers not 2xx, ${result.errors} errors`);
    const requests = result.requests.total;
    const svg = join(OUT, `${name}.svg`);
    // One process draws several routes: each kept profile is named after its route, not its process.
    const kept = join(dirname(file), `${name}.cpuprofile`);
    renameSync(file, kept);
    const rendered = spawnSync(process.execPath, [join(ROOT, 'scripts', 'flame-graph.mjs'), kept, svg, `${title}: ${Math.round(result.requests.average)} req/s`, String(requests)], { encoding: 'utf8' });
    if (rendered.status !== 0) throw new Error(`flame-graph.mjs failed: ${rendered.stderr}`);
    log(`${rendered.stdout.trim()} (${requests} requests)`);
  }
}

await runMain(main);
