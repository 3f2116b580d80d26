#!/usr/bin/env node
/**
 * Hostile-input figures of the built service (`npm run bench:hostile`; builds first when
 * dist/main.js is missing). Contract, "Bounded work and per-object rules". Two parts, each well
 * under 60 s:
 *
 *  1. Work per request: a body of 90,000 keys (~1 MB, under the body limit) and a body nested
 *     10,000 deep, each sent once to POST /generate-token (no token needed), then four top-level
 *     arrays of 520,000 zeros (~1 MB each) sent in parallel to POST /verify-otp (issue 33: four held
 *     /ping for 14 s), while a second client calls GET /ping every 10 ms. Prints the hostile
 *     requests' status and time, the slowest /ping answer meanwhile, and the service's CPU time
 *     spent (from /proc, Linux).
 *  2. Memory: BENCH_HOSTILE_REQUESTS (20,000) requests with a valid token for distinct unknown,
 *     well-formed membership ids (GET /memberships/<uuid>/roles, each a 404), or as many as
 *     BENCH_HOSTILE_SECONDS (30) allow; the line says how many were sent. Prints the heap used
 *     before, right after, and 15 s later, each read from /metrics (nodejs_heap_size_used_bytes)
 *     after a full garbage collection: the service runs with bench/gc-on-signal.cjs preloaded,
 *     which collects on SIGUSR2 (bench only; the service has no such route).
 *
 * The service runs on a fresh database on the PostgreSQL server (BENCH_DATABASE_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), or in memory when no server answers. Everything
 * it starts is stopped, and its database dropped, at the end. Figures, not a gate.
 * Environment: BENCH_MAIN (entry point, dist/main.js), BENCH_HOSTILE_REQUESTS (20000), BENCH_HOSTILE_SECONDS (30),
 * BENCH_HOSTILE_CONNECTIONS (16), BENCH_HOSTILE_ONLY (`work` or `memory`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { buildIfMissing, call, createDatabase, cleanUpOnSignals, cpuSecondsOf, freePort, heapUsedAfterGc, logAs, MAIN, ROOT, runMain, SERVER_URL, sleep, start, waitFor } from './support.mjs';

const REQUESTS = Number(process.env.BENCH_HOSTILE_REQUESTS ?? 20_000);
// The memory part stops sending at this point even if REQUESTS were not all sent (shared cores).
const SEND_SECONDS = Number(process.env.BENCH_HOSTILE_SECONDS ?? 30);
const CONNECTIONS = Number(process.env.BENCH_HOSTILE_CONNECTIONS ?? 16);
const ONLY = process.env.BENCH_HOSTILE_ONLY ?? '';
const SETUP_TOKEN = randomBytes(24).toString('hex');
const PASSWORD = 'bench password 0123';
const PING_EVERY_MS = 10;
const LATER_MS = 15_000;

const log = logAs('hostile');
const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function prepare(base) {
  const setup = await call(base, 'POST', '/setup', {
    headers: { 'x-setup-token': SETUP_TOKEN },
    body: { membership: { name: 'Hostile' }, user: { username: 'bench-admin', email_address: 'bench-admin@example.com', password: PASSWORD } },
  });
  const m = setup.membership._id;
  const admin = await call(base, 'POST', '/generate-token', { headers: { 'x-service-alias': m }, body: { username: 'bench-admin', password: PASSWORD } });
  return { m, bearer: `Bearer ${admin.access_token}` };
}

/** One hostile body (or `parallel` copies at once) to `path` while /ping is called every PING_EVERY_MS. */
async function hostileRequest(base, service, m, name, body, { path = '/generate-token', parallel = 1 } = {}) {
  let pinging = true;
  let slowestPingMs = 0;
  let pings = 0;
  let failedPings = 0;
  const pinger = (async () => {
    while (pinging) {
      const started = performance.now();
      try {
        await (await fetch(`${base}/ping`)).arrayBuffer();
      } catch {
        // A keep-alive connection the stalled service closed late: counted, and the time still shows.
        failedPings++;
      }
      slowestPingMs = Math.max(slowestPingMs, performance.now() - started);
      pings++;
      await sleep(PING_EVERY_MS);
    }
  })();
  await sleep(100);
  const cpuBefore = cpuSecondsOf(service.child.pid);
  const started = performance.now();
  const send = async () => {
    try {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-alias': m }, body });
      return { status: String(res.status), answer: await res.text() };
    } catch (error) {
      return { status: 'failed', answer: JSON.stringify({ errorCode: error.cause?.code ?? error.message }) };
    }
  };
  const answers = await Promise.all(Array.from({ length: parallel }, send));
  // The first answer speaks for all; the largest shows whether any answer grew with the body.
  const { status, answer } = answers[0];
  const largestAnswer = Math.max(...answers.map((one) => one.answer.length));
  const tookMs = performance.now() - started;
  const cpuSeconds = cpuSecondsOf(service.child.pid) - cpuBefore;
  await sleep(100);
  pinging = false;
  await pinger;
  let errorCode = '-';
  try {
    errorCode = JSON.parse(answer).errorCode ?? '-';
  } catch {
    // not JSON
  }
  console.log(
    `${name.padEnd(26)} ${(body.length / 1024).toFixed(0).padStart(5)} KB  -> ${status} ${errorCode.padEnd(22)} (answer ${largestAnswer} B) in ${tookMs.toFixed(0).padStart(5)} ms; ` +
      `service CPU ${(cpuSeconds * 1000).toFixed(0).padStart(5)} ms; slowest /ping meanwhile ${slowestPingMs.toFixed(0).padStart(5)} ms (${pings} pings, ${failedPings} failed)`,
  );
}

async function unknownMemberships(base, bearer) {
  let next = 0;
  const statuses = new Map();
  const deadline = performance.now() + SEND_SECONDS * 1000;
  const worker = async () => {
    while (next < REQUESTS && performance.now() < deadline) {
      next++;
      const res = await fetch(`${base}/memberships/${randomUUID()}/roles`, { headers: { authorization: bearer } });
      await res.arrayBuffer();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return { sent: next, seconds: (performance.now() - started) / 1000, statuses: [...statuses].map(([status, count]) => `${count} x ${status}`).join(', ') };
}

async function main() {
  buildIfMissing(MAIN);
  const databaseUrl = await createDatabase(SERVER_URL, 'portcullis_hostile', (error) => {
    log(`no PostgreSQL server at ${SERVER_URL} (${error.message}); using an in-memory database`);
    return 'memory://';
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = start('the service', ['--max-semi-space-size=32', '--expose-gc', '--require', join(ROOT, 'bench', 'gc-on-signal.cjs'), MAIN], {
    HOST: '127.0.0.1',
    PORT: String(port),
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    SETUP_TOKEN,
    DATABASE_URL: databaseUrl,
  });
  await waitFor(`${base}/ping`, {}, 60_000, service);
  const { m, bearer } = await prepare(base);
  log(`service up on ${base}`);

  if (ONLY !== 'memory') {
    const manyKeys = `{${Array.from({ length: 90_000 }, (_, i) => `"k${i}":1`).join(',')}}`;
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    await hostileRequest(base, service, m, 'warm-up (valid sign-in)', JSON.stringify({ username: 'bench-admin', password: PASSWORD }));
    await hostileRequest(base, service, m, '90,000 keys', manyKeys);
    await hostileRequest(base, service, m, 'depth 10,000', deep);
    const zeros = `[${new Array(520_000).fill('0').join(',')}]`;
    await hostileRequest(base, service, m, '4 x array of 520,000', zeros, { path: '/verify-otp', parallel: 4 });
  }

  if (ONLY !== 'work') {
    const before = await heapUsedAfterGc(base, service);
    const run = await unknownMemberships(base, bearer);
    const after = await heapUsedAfterGc(base, service);
    log(`waiting ${LATER_MS / 1000} s ...`);
    await sleep(LATER_MS);
    const later = await heapUsedAfterGc(base, service);
    console.log(`${run.sent} unknown membership ids in ${run.seconds.toFixed(1)} s (${run.statuses})`);
    console.log(`heap used after a full GC: before ${mb(before)}, right after ${mb(after)} (+${mb(after - before)}), ${LATER_MS / 1000} s later ${mb(later)} (+${mb(later - before)})`);
  }
}

cleanUpOnSignals();
await runMain(main, (error) => log(error.stack ?? String(error)));
