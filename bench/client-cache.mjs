#!/usr/bin/env node
/**
 * The client library's cache (settings CacheTTL and StreamCredentials; contract "Live event
 * stream, and a client library that asks once"). Not a test: it prints figures and never fails on
 * a time.
 *
 *   npm run build && npm run bench:client-cache     # about 1 minute; uses PostgreSQL on 127.0.0.1:5432 when it answers
 *
 * Starts the built service as its own process (on a fresh database of the local PostgreSQL
 * server, else on the embedded one), and a protected Express API as another process
 * (`--api`, this file), with two routes guarded by @portcullis/client for the permission
 * orders.read: `/uncached/orders` by a client without cache, `/cached/orders` by one with
 * CacheTTL 60 following the event stream. Then:
 *
 * 1. Rate: autocannon on each route in alternating slices (BENCH_SLICES of BENCH_SLICE_SECONDS
 *    each way): 16 connections on one repeated Bearer token, 16 connections each repeating a
 *    token of its own, and one connection on one token. Printed: requests per second each way,
 *    the ratio (target ≥ 10), and the same route without any guard (`/bare/orders`, the ceiling
 *    Express itself sets). With 16 connections and one token the library without cache already
 *    shares each service call among the identical requests in flight, so that ratio is the
 *    cache's gain over that sharing; with a token per connection nothing is shared, and every
 *    request without the cache asks the service (twice: who, then the permission).
 * 2. Revocation: BENCH_REVOCATIONS times, a fresh sign-in whose answers the cached route has
 *    kept, then POST /revoke-token; from the revoke answer, the cached route is called again and
 *    again until its first 401. Printed: p50, p99 and max of that time (target p99 ≤ 1 s).
 *
 * BENCH_API_NODE_OPTIONS: node flags for the protected API alone (e.g. "--cpu-prof
 * --cpu-prof-dir=/tmp/prof", its profile written when it stops).
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import {
  api,
  buildIfMissing,
  call,
  createDatabase,
  expectStatus,
  freePort,
  int,
  logAs,
  MAIN,
  ROOT,
  runMain,
  SERVER_URL,
  setUpAdmin,
  sleep,
  start,
  waitFor,
} from './support.mjs';

const log = logAs('client-cache');
const SLICES = int('BENCH_SLICES', 2);
const SLICE_SECONDS = int('BENCH_SLICE_SECONDS', 4);
const REVOCATIONS = int('BENCH_REVOCATIONS', 100);
const CONNECTIONS = 16;
const PASSWORD = 'bench admin password';

/** `--api`: the protected Express API, configured by the parent through its environment. */
async function protectedApi() {
  const require = createRequire(import.meta.url);
  const { PortcullisClient, portcullis } = require(`${ROOT}/packages/client/dist/index.js`);
  const express = require('express');
  const base = { BaseUrl: process.env.SERVICE_URL, MembershipId: process.env.MEMBERSHIP_ID };
  const uncached = portcullis(new PortcullisClient(base));
  const cachedClient = new PortcullisClient({ ...base, CacheTTL: 60, StreamCredentials: process.env.STREAM_CREDENTIALS });
  const cached = portcullis(cachedClient);
  const app = express();
  const rule = { resource: 'orders', action: 'read' };
  app.get('/uncached/orders', uncached.authorized(rule), (_req, res) => res.json({ ok: true }));
  app.get('/cached/orders', cached.authorized(rule), (_req, res) => res.json({ ok: true }));
  // The route with no guard at all: the ceiling of Express itself on this machine.
  app.get('/bare/orders', (_req, res) => res.json({ ok: true }));
  app.get('/ready', (_req, res) => res.status(cachedClient.streamConnected ? 200 : 503).end());
  app.listen(Number(process.env.PORT), '127.0.0.1');
  // An exit rather than death by the signal, so that a --cpu-prof profile is written.
  process.once('SIGTERM', () => process.exit(0));
}

/** `auth`: one Authorization header for every connection, or a list: connection i repeats auth[i]. */
async function measure(url, auth, seconds, connections = CONNECTIONS) {
  const perConnection = Array.isArray(auth) ? auth : undefined;
  let connected = 0;
  const result = await autocannon({
    url,
    headers: { authorization: perConnection ? perConnection[0] : auth },
    connections,
    pipelining: 1,
    duration: seconds,
    ...(perConnection ? { setupClient: (client) => client.setHeaders({ authorization: perConnection[connected++ % perConnection.length] }) } : {}),
  });
  if (result.non2xx || result.errors) log(`warning: ${result.non2xx} non-2xx, ${result.errors} errors of ${result.requests.total}`);
  return result.requests.total / seconds;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function main() {
  buildIfMissing();
  const databaseUrl = await createDatabase(SERVER_URL, 'bench_client_cache', () => 'memory://');
  const port = await freePort();
  const setupToken = `bench-setup-token-${randomBytes(16).toString('hex')}`;
  const service = start('service', [MAIN], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    SETUP_TOKEN: setupToken,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/ping`, {}, 60_000, service);
  const admin = await setUpAdmin(base, setupToken, PASSWORD);
  const m = admin.membershipId;
  const readerRole = await call(base, 'POST', `/memberships/${m}/roles`, { auth: admin.auth, body: { name: 'Order readers', permissions: ['orders.read'] } });
  const streamRole = await call(base, 'POST', `/memberships/${m}/roles`, { auth: admin.auth, body: { name: 'Event readers', permissions: ['events.read'] } });
  const streamApp = await call(base, 'POST', `/memberships/${m}/applications`, { auth: admin.auth, body: { name: 'protected API stream', role: streamRole.slug } });
  const username = `reader-${randomBytes(4).toString('hex')}`;
  await call(base, 'POST', `/memberships/${m}/users`, {
    auth: admin.auth,
    body: { username, email_address: `${username}@example.com`, password: PASSWORD, role: readerRole.slug },
  });
  const signIn = async () =>
    `Bearer ${expectStatus(await api(base, 'POST', '/generate-token', { headers: { 'X-Service-Alias': m }, body: { username, password: PASSWORD } }), 201, 'sign-in').access_token}`;

  const apiPort = await freePort();
  const apiFlags = (process.env.BENCH_API_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  const apiProcess = start('protected-api', [...apiFlags, new URL(import.meta.url).pathname, '--api'], {
    PORT: String(apiPort),
    SERVICE_URL: base,
    MEMBERSHIP_ID: m,
    STREAM_CREDENTIALS: `${streamApp._id}:${streamApp.secret}`,
  });
  const apiBase = `http://127.0.0.1:${apiPort}`;
  const auth = await signIn();
  // The cached client opens its stream with its first protected request.
  await waitFor(`${apiBase}/uncached/orders`, { headers: { authorization: auth } }, 30_000, apiProcess);
  await api(apiBase, 'GET', '/cached/orders', { auth });
  await waitFor(`${apiBase}/ready`, {}, 10_000, apiProcess);

  log('rate: warm-up');
  await measure(`${apiBase}/uncached/orders`, auth, 1);
  await measure(`${apiBase}/cached/orders`, auth, 1);
  const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
  // CONNECTIONS at once on one token (the library shares one service call among identical
  // concurrent lookups, so "without the cache" already answers most of them from one call); as
  // many connections each repeating a token of its own (a session per connection: nothing to
  // share, every request without the cache asks the service); and one connection at a time.
  const ownTokens = [];
  for (let i = 0; i < CONNECTIONS; i++) ownTokens.push(await signIn());
  for (const token of ownTokens) expectStatus(await api(apiBase, 'GET', '/cached/orders', { auth: token }), 200, 'a connection token kept');
  const runs = [];
  for (const [connections, tokens, label] of [
    [CONNECTIONS, auth, 'one repeated Bearer token'],
    [CONNECTIONS, ownTokens, 'a repeated Bearer token per connection'],
    [1, auth, 'one repeated Bearer token'],
  ]) {
    const rates = { uncached: [], cached: [], bare: [] };
    for (let slice = 0; slice < SLICES; slice++) {
      for (const way of slice % 2 === 0 ? ['uncached', 'cached', 'bare'] : ['bare', 'cached', 'uncached']) {
        rates[way].push(await measure(`${apiBase}/${way}/orders`, tokens, SLICE_SECONDS, connections));
      }
    }
    const run = { connections, label, off: mean(rates.uncached), on: mean(rates.cached), bare: mean(rates.bare) };
    runs.push(run);
    log(`rate, ${label}, ${connections} connection(s): ${run.off.toFixed(0)}/s without the cache, ${run.on.toFixed(0)}/s with it, ${run.bare.toFixed(0)}/s unguarded`);
  }

  log(`revocations: ${REVOCATIONS}`);
  const times = [];
  let notCached = 0;
  for (let i = 0; i < REVOCATIONS; i++) {
    const token = await signIn();
    // Twice: the first request asks the service and keeps the answers, the second is served by the cache.
    for (let j = 0; j < 2; j++) expectStatus(await api(apiBase, 'GET', '/cached/orders', { auth: token }), 200, 'protected route before revocation');
    const revokedAt = await (async () => {
      const res = await fetch(`${base}/revoke-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: token.slice(7) }) });
      await res.arrayBuffer();
      if (res.status !== 204) throw new Error(`revoke: ${res.status}`);
      return performance.now();
    })();
    let answers = 0;
    for (;;) {
      const { status } = await api(apiBase, 'GET', '/cached/orders', { auth: token });
      answers++;
      if (status === 401) break;
      if (status !== 200) throw new Error(`protected route answered ${status}`);
      if (performance.now() - revokedAt > 10_000) throw new Error('no 401 within 10 s of a revocation');
    }
    times.push(performance.now() - revokedAt);
    // The first call after the revoke answer was already a 401: the event was there first.
    if (answers === 1) notCached++;
    await sleep(5);
  }
  times.sort((a, b) => a - b);

  console.log('');
  console.log(`Client library cache (CacheTTL 60 + event stream), ${SLICES} slices of ${SLICE_SECONDS} s each way; database: ${databaseUrl === 'memory://' ? 'embedded' : 'PostgreSQL server'}`);
  for (const { connections, label, off, on, bare } of runs) {
    console.log(
      `protected route, ${label}, ${String(connections).padStart(2)} connection(s): ${off.toFixed(0)}/s without the cache, ` +
        `${on.toFixed(0)}/s with it: ratio ${(on / off).toFixed(1)} (target ≥ 10); the same route unguarded: ${bare.toFixed(0)}/s`,
    );
  }
  console.log(
    `revocation → first 401 at the protected API over ${times.length}: p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms, ` +
      `max ${times.at(-1).toFixed(1)} ms (target p99 ≤ 1000 ms); ${notCached} of them already 401 at the first call after the revoke answer`,
  );
}

if (process.argv.includes('--api')) await protectedApi();
else await runMain(main);
