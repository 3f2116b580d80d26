#!/usr/bin/env node
/**
 * Webhook load benchmark: how the webhook queue copes with a burst of events, and proof that no
 * event row is lost. Not a test: it prints figures and never fails on a time.
 *
 *   npm run build && node bench/webhook-load.mjs
 *
 * It starts the built service (dist/) in this process on 127.0.0.1 with an in-memory embedded
 * database (or, with DATABASE_URL=postgres://..., on a fresh database it creates on that server
 * and drops afterwards), a local HTTP receiver, sets up an installation, attaches a webhook on
 * UserCreated, then creates users as fast as it can with bounded concurrency until BENCH_USERS
 * are created or BENCH_MAX_SECONDS have passed. It reports deliveries received, calls dropped by
 * the full queue, result events, and checks that UserCreated events == users created. Everything
 * it starts is stopped at the end (also on Ctrl-C).
 *
 * Environment (all optional):
 *   BENCH_USERS=10000          users to create
 *   BENCH_CONCURRENCY=16       parallel create-user requests
 *   BENCH_MAX_SECONDS=120      bound of the whole creation phase
 *   BENCH_RECEIVER_DELAY_MS=0  the receiver waits this long before answering (a slow receiver)
 *   BENCH_SETTLE_SECONDS=30    longest wait for the queue to empty after the creation phase
 *   DATABASE_URL               a PostgreSQL server (a database is created on it and dropped)
 *   DIST_DIR=dist              where the built service is
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

// argon2 hashes on libuv's pool; size it before anything loads argon2 (as main.ts does).
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, availableParallelism()));
// Imported after that line: a static import would be read first.
const { api, startInProcess, listenOnLoopback, setUpAdmin, createDatabase, expectStatus, int, onCleanup, runMain } = await import('./support.mjs');

const require = createRequire(import.meta.url);
const DIST = resolve(process.env.DIST_DIR ?? new URL('../dist', import.meta.url).pathname);
const USERS = int('BENCH_USERS', 10_000);
const CONCURRENCY = int('BENCH_CONCURRENCY', 16);
const MAX_SECONDS = int('BENCH_MAX_SECONDS', 120);
const RECEIVER_DELAY_MS = int('BENCH_RECEIVER_DELAY_MS', 0);
const SETTLE_SECONDS = int('BENCH_SETTLE_SECONDS', 30);
const SETUP_TOKEN = `bench-setup-token-${randomBytes(16).toString('hex')}`;
const PASSWORD = 'bench user password';

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    interrupted = true;
    console.error(`\n${signal}: stopping`);
  });
}

/** A receiver that counts requests and answers 200 (after BENCH_RECEIVER_DELAY_MS). */
async function startReceiver() {
  const state = { received: 0 };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      state.received++;
      const answer = () => response.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      if (RECEIVER_DELAY_MS) setTimeout(answer, RECEIVER_DELAY_MS);
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  const close = await listenOnLoopback(server);
  return {
    state,
    url: `http://127.0.0.1:${server.address().port}/users/{{document._id}}`,
    close,
  };
}

/** A fresh database on the server in DATABASE_URL, dropped at the end; or the in-memory embedded one. */
async function benchDatabase() {
  const server = process.env.DATABASE_URL;
  if (!server || server === 'memory://') return { url: 'memory://', description: 'embedded PostgreSQL (PGlite) in memory' };
  const url = await createDatabase(server, 'portcullis_bench');
  return { url, description: `PostgreSQL server, database ${new URL(url).pathname.slice(1)}` };
}

function percentile(sorted, p) {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function main() {
  const { QueueRegistry } = require(`${DIST}/queue/queue-registry.js`);
  const { WebhookDispatcher } = require(`${DIST}/webhooks/webhook-dispatcher.js`);

  const receiver = await startReceiver();
  onCleanup(() => receiver.close());
  const database = await benchDatabase();
  // LOG_LEVEL (error unless set): drops are counted from the queue; thousands of warn lines would only slow the run.
  const { app, config, base, close: closeApp } = await startInProcess(DIST, { SETUP_TOKEN, DATABASE_URL: database.url });
  const queue = app.get(QueueRegistry).get('webhooks');
  const dispatcher = app.get(WebhookDispatcher);

  const { setup, membershipId, auth } = await setUpAdmin(base, SETUP_TOKEN, PASSWORD);
  const adminId = setup.user._id;
  expectStatus(
    await api(base, 'POST', `/memberships/${membershipId}/webhooks`, {
      auth,
      body: { name: 'bench', event: 'UserCreated', status: 'active', try_count: 1, request: { method: 'POST', url: receiver.url, body: { user: '{{document.username}}' } } },
    }),
    201,
    'create webhook',
  );

  console.log(`Webhook load: ${USERS} users, concurrency ${CONCURRENCY}, at most ${MAX_SECONDS} s, receiver delay ${RECEIVER_DELAY_MS} ms`);
  console.log(`service ${base} on ${database.description}; build ${DIST}`);

  // Creation phase: bounded concurrency, bounded time.
  const started = performance.now();
  const deadline = Date.now() + MAX_SECONDS * 1000;
  const latencies = [];
  const failures = new Map();
  let next = 0;
  let created = 0;
  let maxDepth = 0;
  const sampler = setInterval(() => {
    maxDepth = Math.max(maxDepth, queue.depth);
  }, 50);
  const progress = setInterval(() => {
    const seconds = (performance.now() - started) / 1000;
    console.log(`  ${seconds.toFixed(0)} s: ${created} users, ${receiver.state.received} deliveries, queue depth ${queue.depth}, dropped ${queue.dropped}`);
  }, 10_000);
  async function worker() {
    while (!interrupted && Date.now() < deadline) {
      const i = next++;
      if (i >= USERS) return;
      const username = `u${i}-${randomBytes(3).toString('hex')}`;
      const t0 = performance.now();
      const result = await api(base, 'POST', `/memberships/${membershipId}/users`, {
        auth,
        body: { username, email_address: `${username}@example.com`, password: PASSWORD, firstname: `User ${i}` },
      });
      latencies.push(performance.now() - t0);
      if (result.status === 201) created++;
      else failures.set(result.status, (failures.get(result.status) ?? 0) + 1);
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, () => worker()));
  const creationSeconds = (performance.now() - started) / 1000;
  clearInterval(progress);

  // Let the queue empty (bounded), then read the figures before closing.
  const settleUntil = Date.now() + SETTLE_SECONDS * 1000;
  while (!interrupted && Date.now() < settleUntil && (queue.depth > 0 || queue.inFlight > 0 || receiver.state.received + queue.dropped < created)) {
    await new Promise((done) => setTimeout(done, 50));
  }
  clearInterval(sampler);
  const settledSeconds = (performance.now() - started) / 1000;

  const count = async (where) =>
    expectStatus(await api(base, 'POST', `/memberships/${membershipId}/events/_query?limit=1&with_count=true`, { auth, body: { where } }), 200, 'count events').count;
  const userCreatedEvents = await count({ event_type: 'UserCreated', utilizer_id: adminId });
  const sentEvents = await count({ event_type: 'WebhookRequestSent' });
  const failedEvents = await count({ event_type: 'WebhookRequestFailed' });
  const calls = dispatcher.outgoingCallTotals();
  const dropped = queue.dropped;
  const drain = await dispatcher.drain(config.shutdownDrainMs);
  await closeApp();

  latencies.sort((a, b) => a - b);
  const lostEvents = created - userCreatedEvents;
  console.log('');
  console.log(`users created            ${created} in ${creationSeconds.toFixed(1)} s (${(created / creationSeconds).toFixed(1)}/s)${created < USERS ? `  [stopped at ${created < USERS && !interrupted ? 'the time bound' : 'interrupt'}]` : ''}`);
  if (failures.size) console.log(`failed create requests    ${[...failures].map(([status, n]) => `${n} x HTTP ${status}`).join(', ')}`);
  console.log(`create latency (ms)      p50 ${percentile(latencies, 50).toFixed(0)}  p95 ${percentile(latencies, 95).toFixed(0)}  p99 ${percentile(latencies, 99).toFixed(0)}  max ${(latencies.at(-1) ?? 0).toFixed(0)}`);
  console.log(`deliveries received      ${receiver.state.received} (all done after ${settledSeconds.toFixed(1)} s)`);
  console.log(`dropped (queue full)     ${dropped}   (capacity ${queue.capacity}, max depth seen ${maxDepth})`);
  console.log(`outgoing calls           success ${calls.success}, failure ${calls.failure}, timeout ${calls.timeout}, mean ${(calls.durationSecondsSum / Math.max(1, calls.success + calls.failure + calls.timeout) * 1000).toFixed(1)} ms`);
  console.log(`result events            WebhookRequestSent ${sentEvents}, WebhookRequestFailed ${failedEvents}`);
  console.log(`shutdown drain           completed ${drain.completed}, delivered ${drain.delivered}, lost ${drain.lost}`);
  console.log(`UserCreated events       ${userCreatedEvents} of ${created} users: ${lostEvents === 0 ? 'no event lost' : `${lostEvents} LOST`}`);
  const accounted = receiver.state.received + dropped;
  if (accounted !== created) console.log(`note: ${created - accounted} calls neither delivered nor dropped before the settle bound`);
  process.exitCode = lostEvents === 0 ? 0 : 1;
}

await runMain(main, (error) => console.error(error instanceof Error ? error.stack : String(error)));
