#!/usr/bin/env node
/**
 * What durable webhook delivery costs (contract "Durable webhook delivery"; issue 35). Not a
 * test: it prints figures and never fails on a time.
 *
 *   npm run build && node bench/webhook-durability.mjs     # about 1.5 minutes; needs PostgreSQL on 127.0.0.1:5432
 *
 * Starts the built service as its own process on a fresh database of the local PostgreSQL server
 * and a fast receiver (answers 204) on 127.0.0.1 in this process, then:
 *
 * 1. sign-in (POST /generate-token) with one webhook on TokenGenerated and without it, and
 *    verify-token (GET /verify-token, Bearer) with one webhook on TokenVerified and without it,
 *    in alternating slices (BENCH_SLICES of BENCH_SLICE_SECONDS each way): the webhook is made
 *    active for the "with" slices and passive for the others. Before every slice the deliveries
 *    the previous one left are waited for, so each slice pays for the calls its own events cause
 *    while it runs. Printed: requests per second each way and the ratio (targets: sign-in ≥ 0.90,
 *    verify-token ≥ 0.85).
 *    Then the same verify-token comparison against a second instance on the same database with
 *    WEBHOOK_DISPATCH=off ("verify, split"): it records the deliveries and announces them; the
 *    first instance, woken by NOTIFY, makes the calls. Its CPU per request is the request path's
 *    own cost of a webhook; the calls' cost moves to the dispatching instance. Last, after the
 *    delivery rate, "verify, no calls": the first instance stopped, so the second records its
 *    deliveries and nothing calls them; the request path's share alone.
 * 2. The delivery rate: BENCH_DELIVERIES verify-token events with the webhook active, timed from
 *    the first call the receiver gets to the last; then the same number of plain POSTs from this
 *    process to the same receiver, 8 at a time (the dispatcher's parallel calls). Printed:
 *    deliveries per second, posts per second, and the ratio.
 *
 * The two cores of this machine are shared: the figures move ±15% from minute to minute, which the
 * alternating slices only partly cancel.
 */
import { availableParallelism } from 'node:os';
import { createServer } from 'node:http';
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import {
  api,
  buildIfMissing,
  call,
  cpuSecondsOf,
  createDatabase,
  expectStatus,
  freePort,
  int,
  listenOnLoopback,
  logAs,
  MAIN,
  onCleanup,
  runMain,
  SERVER_URL,
  setUpAdmin,
  sleep,
  start,
  stop,
  waitFor,
} from './support.mjs';

const log = logAs('webhook-durability');
const SLICES = int('BENCH_SLICES', 4);
const SLICE_SECONDS = int('BENCH_SLICE_SECONDS', 3);
const DELIVERIES = int('BENCH_DELIVERIES', 2000);
const CONNECTIONS = 16;
const THREADS = Number(process.env.UV_THREADPOOL_SIZE ?? availableParallelism());
const PASSWORD = 'bench admin password';
const DISPATCH_CONCURRENCY = 8;

async function startReceiver() {
  const state = { received: 0, first: 0, last: 0 };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      state.received++;
      const now = performance.now();
      if (!state.first) state.first = now;
      state.last = now;
      response.writeHead(204).end();
    });
  });
  onCleanup(await listenOnLoopback(server));
  return { state, url: `http://127.0.0.1:${server.address().port}/hook` };
}

/**
 * Webhook work not finished: deliveries pending in the database (every instance) plus calls
 * waiting or running in the in-memory queue, from /metrics. The queue gauges also let this bench
 * measure a build without durable deliveries (BENCH_MAIN=<its dist/main.js>) fairly.
 */
async function pendingDeliveries(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const gauges = ['portcullis_durable_queue_pending{queue="webhooks"}', 'portcullis_queue_depth{queue="webhooks"}', 'portcullis_queue_in_flight{queue="webhooks"}'];
  return text
    .split('\n')
    .filter((line) => gauges.some((gauge) => line.startsWith(`${gauge} `)))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

async function settled(base, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while ((await pendingDeliveries(base)) > 0 && Date.now() < deadline) await sleep(100);
}

async function measure(options, seconds) {
  const result = await autocannon({ pipelining: 1, duration: seconds, ...options });
  if (result.non2xx || result.errors) log(`warning: ${result.non2xx} non-2xx, ${result.errors} errors of ${result.requests.total}`);
  return result.requests.total / seconds;
}

async function main() {
  buildIfMissing();
  const databaseUrl = await createDatabase(SERVER_URL, 'bench_webhooks');
  const port = await freePort();
  const setupToken = `bench-setup-token-${randomBytes(16).toString('hex')}`;
  const service = start('service', [MAIN], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    SETUP_TOKEN: setupToken,
    OUTBOUND_ALLOW: '127.0.0.1/32,::1/128',
    UV_THREADPOOL_SIZE: String(THREADS),
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/ping`, {}, 60_000, service);
  const admin = await setUpAdmin(base, setupToken, PASSWORD);
  const m = admin.membershipId;
  const adminName = admin.setup.user.username;
  const receiver = await startReceiver();
  const hooks = {};
  for (const event of ['TokenGenerated', 'TokenVerified']) {
    const body = { name: `bench ${event}`, event, status: 'passive', try_count: 1, request: { method: 'POST', url: receiver.url } };
    hooks[event] = { body, id: (await call(base, 'POST', `/memberships/${m}/webhooks`, { auth: admin.auth, body }))._id };
  }
  // Through whichever instance is up: the last scenario stops the first.
  let adminBase = base;
  const setStatus = async (event, status) => {
    if (hooks[event].body.status === status) return;
    hooks[event].body = { ...hooks[event].body, status };
    await call(adminBase, 'PUT', `/memberships/${m}/webhooks/${hooks[event].id}`, { auth: admin.auth, body: hooks[event].body });
  };

  const signIn = {
    url: `${base}/generate-token`,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-alias': m },
    body: JSON.stringify({ username: adminName, password: PASSWORD }),
    connections: THREADS * 2,
  };
  const verify = {
    url: `${base}/verify-token`,
    headers: { authorization: admin.auth },
    connections: CONNECTIONS,
  };
  // An API instance on the same database that records deliveries but makes no call
  // (WEBHOOK_DISPATCH=off): `service`, which dispatches, is woken by its NOTIFY and calls.
  const apiPort = await freePort();
  const apiService = start('api instance', [MAIN], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    PORT: String(apiPort),
    DATABASE_URL: databaseUrl,
    SETUP_TOKEN: setupToken,
    OUTBOUND_ALLOW: '127.0.0.1/32,::1/128',
    UV_THREADPOOL_SIZE: String(THREADS),
    WEBHOOK_DISPATCH: 'off',
  });
  const apiBase = `http://127.0.0.1:${apiPort}`;
  await waitFor(`${apiBase}/ping`, {}, 60_000, apiService);

  const scenarios = [
    { name: 'sign-in', event: 'TokenGenerated', options: signIn, measured: service, target: 0.9 },
    { name: 'verify-token', event: 'TokenVerified', options: verify, measured: service, target: 0.85 },
    { name: 'verify, split', event: 'TokenVerified', options: { ...verify, url: `${apiBase}/verify-token` }, measured: apiService, target: 0.85 },
  ];
  const rows = [];
  /** Alternating slices with the scenario's webhook active and passive; `settle`: wait for the deliveries a slice left before the next. */
  const runScenario = async (scenario, settle = true) => {
    log(`${scenario.name}: warm-up`);
    await measure(scenario.options, 2);
    const rates = { without: [], with: [] };
    const cpu = { without: 0, with: 0, requestsWithout: 0, requestsWith: 0 };
    for (let slice = 0; slice < SLICES; slice++) {
      for (const way of slice % 2 === 0 ? ['without', 'with'] : ['with', 'without']) {
        await setStatus(scenario.event, way === 'with' ? 'active' : 'passive');
        if (settle) await settled(base);
        const before = cpuSecondsOf(scenario.measured.child.pid);
        const rate = await measure(scenario.options, SLICE_SECONDS);
        cpu[way] += cpuSecondsOf(scenario.measured.child.pid) - before;
        cpu[way === 'with' ? 'requestsWith' : 'requestsWithout'] += rate * SLICE_SECONDS;
        rates[way].push(rate);
      }
    }
    await setStatus(scenario.event, 'passive');
    if (settle) await settled(base);
    const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
    const row = {
      name: scenario.name,
      without: mean(rates.without),
      with: mean(rates.with),
      cpuUsWithout: (1e6 * cpu.without) / cpu.requestsWithout,
      cpuUsWith: (1e6 * cpu.with) / cpu.requestsWith,
      target: scenario.target,
    };
    rows.push(row);
    log(`${scenario.name}: ${row.without.toFixed(0)}/s without, ${row.with.toFixed(0)}/s with a webhook: ${(row.with / row.without).toFixed(2)}`);
  };
  for (const scenario of scenarios) await runScenario(scenario);

  // Delivery rate: a burst of verify-token events with the webhook active.
  await setStatus('TokenVerified', 'active');
  receiver.state.first = 0;
  const receivedBefore = receiver.state.received;
  const burst = await autocannon({ ...verify, amount: DELIVERIES });
  const deadline = Date.now() + 120_000;
  while (receiver.state.received - receivedBefore < burst.requests.total && Date.now() < deadline) await sleep(50);
  const delivered = receiver.state.received - receivedBefore;
  const deliverySeconds = (receiver.state.last - receiver.state.first) / 1000;
  await setStatus('TokenVerified', 'passive');

  // The same number of plain POSTs from one process, DISPATCH_CONCURRENCY at a time.
  const body = JSON.stringify({ document: { token_type: 'Bearer' }, prior: null, payload: null });
  let next = 0;
  const postsStarted = performance.now();
  await Promise.all(
    Array.from({ length: DISPATCH_CONCURRENCY }, async () => {
      while (next++ < delivered) {
        const res = await fetch(receiver.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        await res.arrayBuffer();
      }
    }),
  );
  const postSeconds = (performance.now() - postsStarted) / 1000;
  const deliveryRate = delivered / deliverySeconds;
  const postRate = delivered / postSeconds;

  // The request path's own share: the API instance alone, the dispatching instance stopped, so
  // the deliveries it records wait in the database and nothing else competes for the cores.
  await stop(service);
  adminBase = apiBase;
  await runScenario({ name: 'verify, no calls', event: 'TokenVerified', options: { ...verify, url: `${apiBase}/verify-token` }, measured: apiService, target: 0.85 }, false);

  console.log('');
  console.log(`Durable webhook delivery, ${SLICES} slices of ${SLICE_SECONDS} s each way (shared 2-core machine: noisy, ±15%)`);
  console.log('scenario          without/s   with/s   ratio  target   cpu µs/req without → with (of the instance answering)');
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(16)} ${row.without.toFixed(0).padStart(9)} ${row.with.toFixed(0).padStart(8)}   ${(row.with / row.without).toFixed(2)}   ≥ ${row.target.toFixed(2)}   ${row.cpuUsWithout.toFixed(0)} → ${row.cpuUsWith.toFixed(0)}`,
    );
  }
  console.log('verify, split: the answering instance has WEBHOOK_DISPATCH=off; the other instance, woken by NOTIFY, makes the calls.');
  console.log('verify, no calls: the same instance with the other one stopped: deliveries are recorded and wait; what the request path itself pays.');
  console.log(
    `delivery rate: ${delivered} of ${burst.requests.total} deliveries in ${deliverySeconds.toFixed(2)} s = ${deliveryRate.toFixed(0)}/s; ` +
      `plain POSTs from one process (${DISPATCH_CONCURRENCY} at a time): ${postRate.toFixed(0)}/s; ratio ${(deliveryRate / postRate).toFixed(2)}`,
  );
  expectStatus(await api(apiBase, 'GET', '/ping'), 200, 'ping');
}

await runMain(main);
