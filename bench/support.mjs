/**
 * What the bench scripts share: a cleanup registry (run at the end, and on SIGINT/SIGTERM), a
 * scratch database on the PostgreSQL server that is dropped by it, child processes of the service
 * (and of the floor and peer apps) that it stops, free loopback ports, the JSON calls that prepare
 * data, and CPU time from /proc. Not a benchmark itself.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
// Another build of the service may be measured instead of dist/ (e.g. a build kept elsewhere).
export const MAIN = process.env.BENCH_MAIN ?? join(ROOT, 'dist', 'main.js');
const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ on Linux

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let log = (message) => process.stderr.write(`${message}\n`);

/** A log to stderr whose lines start with `[tag]`; the messages of this module go there too. */
export function logAs(tag) {
  log = (message) => process.stderr.write(`[${tag}] ${message}\n`);
  return log;
}

const cleanups = [];

/** Registers a step for cleanup(); the steps run last first. */
export function onCleanup(step) {
  cleanups.push(step);
}

/** Runs every registered step once, last registered first; a failing step is logged, not thrown. */
export async function cleanup() {
  while (cleanups.length) {
    const step = cleanups.pop();
    try {
      await step();
    } catch (error) {
      log(`cleanup: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/**
 * On SIGINT or SIGTERM: log `<signal>: stopping what <what> started` (when `what` is given),
 * clean up and exit 1; a second signal exits at once.
 */
export function cleanUpOnSignals(what) {
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      if (interrupted) process.exit(1);
      interrupted = true;
      if (what) log(`${signal}: stopping what ${what} started`);
      void cleanup().finally(() => process.exit(1));
    });
  }
}

/** Runs `main`, reports its error (exit code 1), and cleans up either way. */
export async function runMain(main, report = (error) => log(`failed: ${error.stack ?? error.message}`)) {
  try {
    await main();
  } catch (error) {
    report(error);
    process.exitCode = 1;
  } finally {
    await cleanup();
  }
}

/** Builds the service when its entry point is missing. */
export function buildIfMissing(main = MAIN) {
  if (existsSync(main)) return;
  log('dist/main.js is missing: npm run build');
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}

/**
 * A fresh database `<prefix>_<random>` on the server, dropped at cleanup; its URL. When no server
 * answers: what `ifNoServer(error)` returns, or the error when there is no `ifNoServer`.
 */
export async function createDatabase(serverUrl, prefix, ifNoServer) {
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 2_000 });
  try {
    await admin.connect();
  } catch (error) {
    if (ifNoServer) return ifNoServer(error);
    throw error;
  }
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  onCleanup(() => dropDatabase(serverUrl, url.toString()));
  return url.toString();
}

/** Drops a database createDatabase made (once it is dropped, its cleanup finds nothing to do). */
export async function dropDatabase(serverUrl, databaseUrl) {
  const name = new URL(databaseUrl).pathname.slice(1);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (!rowCount) return;
    await client.query(`drop database if exists ${name} with (force)`);
    log(`dropped database ${name}`);
  } finally {
    await client.end();
  }
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Listens on a free loopback port; the function that closes it, its open connections too. */
export async function listenOnLoopback(server) {
  const sockets = new Set();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', ok));
  return () =>
    new Promise((done) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => done());
    });
}

/**
 * `node <args>` in the repository with only PATH and `env`, stopped at cleanup. Its stderr is kept
 * (the last 4000 characters, for the error when it exits early) unless `stderr: 'inherit'`.
 */
export function start(name, args, env, { stderr: stderrMode = 'pipe' } = {}) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'ignore', stderrMode] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const entry = { name, child, exited, stderr: () => stderr };
  onCleanup(() => stop(entry));
  return entry;
}

/** SIGTERM, then SIGKILL after 15 s; resolves when the process has exited. */
export async function stop(entry) {
  if (entry.child.exitCode !== null || entry.child.signalCode !== null) return;
  entry.child.kill('SIGTERM');
  const timer = setTimeout(() => entry.child.kill('SIGKILL'), 15_000);
  await entry.exited;
  clearTimeout(timer);
}

/** Until `url` answers 2xx; throws when `entry` (a started process) exits first or after `timeoutMs`. */
export async function waitFor(url, options = {}, timeoutMs = 60_000, entry) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (entry && entry.child.exitCode !== null) throw new Error(`${entry.name} exited early:\n${entry.stderr()}`);
    try {
      const res = await fetch(url, options);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** A JSON request that must answer 2xx; the parsed answer (null when empty). */
export async function call(base, method, path, { auth, body, headers = {} } = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(auth ? { authorization: auth } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** A JSON request whatever its status: `{ status, body }`, the body parsed when it is JSON. */
export async function api(base, method, path, { body, auth, headers = {} } = {}) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(body ? { 'Content-Type': 'application/json' } : {}), ...(auth ? { Authorization: auth } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: response.status, body: json };
}

/** The body of an api() result that has `status`; otherwise an error naming `what` (body cut at 500 characters). */
export function expectStatus(result, status, what) {
  if (result.status !== status) throw new Error(`${what}: expected ${status}, got ${result.status} ${JSON.stringify(result.body)?.slice(0, 500)}`);
  return result.body;
}

/**
 * The built service (`dist`, a directory of CommonJS) in this process on a free loopback port,
 * configured by `env` over the defaults below, closed at cleanup: `{ app, config, base, close }`; `close`
 * may be called earlier (the cleanup then does nothing).
 */
export async function startInProcess(dist, env) {
  const require = createRequire(import.meta.url);
  const { loadConfig } = require(`${dist}/config/config.js`);
  const { createApp } = require(`${dist}/bootstrap.js`);
  const { createLogger } = require(`${dist}/common/logger.js`);
  const config = loadConfig({
    NODE_ENV: 'production',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
    HOST: '127.0.0.1',
    PORT: '0',
    // The webhook receivers are on loopback, which the outbound policy refuses unless allowed.
    OUTBOUND_ALLOW: '127.0.0.1/32,::1/128',
    ...env,
  });
  const { app } = await createApp(config, createLogger(config.logLevel));
  let closed = false;
  const close = async () => {
    if (closed) return undefined;
    closed = true;
    await app.close();
  };
  onCleanup(close);
  await app.listen(0, '127.0.0.1');
  return { app, config, base: `http://127.0.0.1:${app.getHttpServer().address().port}`, close };
}

/** POST /setup of membership 'Bench' with a random admin, who signs in: `{ setup, membershipId, auth }` (auth: the Bearer header). */
export async function setUpAdmin(base, setupToken, password) {
  const adminName = `admin-${randomBytes(4).toString('hex')}`;
  const setup = expectStatus(
    await api(base, 'POST', '/setup', {
      headers: { 'X-Setup-Token': setupToken },
      body: { membership: { name: 'Bench' }, user: { username: adminName, email_address: `${adminName}@example.com`, password } },
    }),
    201,
    'setup',
  );
  const membershipId = setup.membership._id;
  const token = expectStatus(
    await api(base, 'POST', '/generate-token', { headers: { 'X-Service-Alias': membershipId }, body: { username: adminName, password } }),
    201,
    'sign-in',
  );
  return { setup, membershipId, auth: `Bearer ${token.access_token}` };
}

/** A whole number >= 0 from the environment, `fallback` when unset or empty. */
export function int(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return value;
}

/**
 * CPU seconds (user + system) a process has used so far; NaN where /proc is not there. With
 * `reapedChildren`, also what its children that have exited used (cutime + cstime).
 */
export function cpuSecondsOf(pid, reapedChildren = false) {
  try {
    // Fields after the command name, which sits in parentheses and may contain spaces.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + (reapedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
    return ticks / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU seconds used so far by every PostgreSQL server process on this machine, those that ended
 * included: a backend or autovacuum worker that exits hands its time to the postmaster's
 * children counters (without them, one exiting worker made a scenario's figure negative).
 *
 * The postmaster is read before its children. /proc lists processes by pid, and once pids wrap
 * around (pid_max is 32768 here; a full bench starts thousands of processes) a backend can sort
 * before the postmaster: read, then reaped into the postmaster's counters, then read there again,
 * it counted twice, and the next figure came out negative (2026-12-02: pg µs -106). Read in this
 * order, a backend reaped between the two reads is missed once instead, and counted by the next
 * reading: a slice may borrow from the one before it, never go below zero.
 */
export function postgresCpuSeconds() {
  const parentOf = new Map();
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
        parentOf.set(entry, readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      } catch {
        // the process ended meanwhile
      }
    }
  } catch {
    return Number.NaN;
  }
  const postmasters = [...parentOf.keys()].filter((pid) => !parentOf.has(parentOf.get(pid)));
  const children = [...parentOf.keys()].filter((pid) => parentOf.has(parentOf.get(pid)));
  let total = 0;
  for (const pid of [...postmasters, ...children]) {
    const seconds = cpuSecondsOf(pid, true);
    // NaN: the process ended since the listing (a child's time is then in its postmaster's counters).
    if (Number.isFinite(seconds)) total += seconds;
  }
  return total;
}

/**
 * The V8 heap a service still holds, in bytes: a full garbage collection first (the service must
 * run with `--expose-gc --require bench/gc-on-signal.cjs`, which collects on SIGUSR2), then
 * `nodejs_heap_size_used_bytes` from its /metrics. Without the collection the figure is mostly
 * garbage V8 has not collected yet; NaN when /metrics has no such line.
 */
export async function heapUsedAfterGc(base, entry, settleMs = 5_000) {
  await queuesSettled(base, settleMs);
  entry.child.kill('SIGUSR2');
  await sleep(500);
  return (await metricSamples(base)).find(({ name }) => name === 'nodejs_heap_size_used_bytes')?.value ?? Number.NaN;
}

/**
 * Until the service's queues (webhook calls, mail) hold nothing and work on nothing, in memory
 * and in the database, for at most `timeoutMs`: what a piece of load left queued is work still
 * to do, not memory left behind (a long run's heap sample taken while its webhook calls were
 * queued read 65 MB, and 48 MB at the next). The database's backlog counts too: while deliveries
 * wait there, the dispatcher keeps its in-memory queue full (samples of 70-80 MB after the pieces
 * that call the webhook, 55 MB after the others, in a run of 2026-11-30).
 */
async function queuesSettled(base, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  const queueGauges = new Set(['portcullis_queue_depth', 'portcullis_queue_in_flight', 'portcullis_durable_queue_pending']);
  for (;;) {
    const busy = (await metricSamples(base)).some(({ name, value }) => queueGauges.has(name) && value > 0);
    if (!busy || Date.now() > deadline) return;
    await sleep(100);
  }
}

/** The samples of a service's /metrics: each line's metric name (labels left out) and value. */
async function metricSamples(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => ({ name: line.split(/[{ ]/, 1)[0], value: Number(line.split(' ').at(-1)) }));
}

/** A comma-separated list of names from the environment (BENCH_ONLY, SCALE_ONLY) as a set; null when unset. */
export function namesFrom(value) {
  return value ? new Set(value.split(',').map((name) => name.trim())) : null;
}
