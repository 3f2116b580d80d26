#!/usr/bin/env node
/**
 * What one live event stream costs the service that serves it (contract "Live event stream, and
 * a client library that asks once"). Not a test: it prints figures and never fails on a time.
 *
 *   npm run build && npm run bench:stream-cost     # about 1.5 minutes; needs PostgreSQL on 127.0.0.1:5432
 *
 * Starts the built service on a fresh database of the local PostgreSQL server, signs one user in
 * 16 times, then measures refresh (16 connections, a session each, revoke=false: two events per
 * request, TokenRefreshed among them) in alternating slices (BENCH_SLICES of BENCH_SLICE_SECONDS
 * each way) without any stream and with BENCH_STREAMS streams of the membership open, read by
 * this process as fast as they come. A stream reads after every commit of its membership, so
 * under writes it reads back to back. The streams ask `?types=` the client library's followed
 * types (`FOLLOWED_EVENT_TYPES`, packages/client), as its cache does; BENCH_STREAM_TYPES=all asks
 * every type. Printed: the rate each way, the ratio, and the CPU time per refresh of the service
 * and of the PostgreSQL server (/proc).
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import autocannon from 'autocannon';
import {
  api,
  buildIfMissing,
  call,
  cpuSecondsOf,
  createDatabase,
  dropDatabase,
  expectStatus,
  freePort,
  int,
  logAs,
  MAIN,
  postgresCpuSeconds,
  ROOT,
  runMain,
  SERVER_URL,
  setUpAdmin,
  sleep,
  start,
  stop,
  waitFor,
} from './support.mjs';

const log = logAs('stream-cost');
const SLICES = int('BENCH_SLICES', 6);
const SLICE_SECONDS = int('BENCH_SLICE_SECONDS', 4);
const STREAMS = int('BENCH_STREAMS', 1);
const CONNECTIONS = 16;
const PASSWORD = 'bench password 0123';

/** Opens the streams; each is read and thrown away as it comes. */
async function openStreams(url, authorization) {
  const controllers = [];
  let bytes = 0;
  for (let i = 0; i < STREAMS; i++) {
    const controller = new AbortController();
    const res = await fetch(url, { headers: { authorization }, signal: controller.signal });
    if (res.status !== 200) throw new Error(`stream: ${res.status}`);
    void (async () => {
      try {
        for await (const chunk of res.body) bytes += chunk.length;
      } catch {
        // aborted at the end of the slice
      }
    })();
    controllers.push(controller);
  }
  return { bytes: () => bytes, close: () => controllers.forEach((controller) => controller.abort()) };
}

async function main() {
  buildIfMissing();
  const databaseUrl = await createDatabase(SERVER_URL, 'bench_stream_cost', () => {
    throw new Error('this bench needs the PostgreSQL server on 127.0.0.1:5432 (BENCH_DATABASE_URL)');
  });
  const port = await freePort();
  const setupToken = `bench-setup-token-${randomBytes(16).toString('hex')}`;
  const service = start('service', [MAIN], { NODE_ENV: 'production', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: databaseUrl, SETUP_TOKEN: setupToken });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/ping`, {}, 60_000, service);
  const admin = await setUpAdmin(base, setupToken, PASSWORD);
  const m = admin.membershipId;
  const role = await call(base, 'POST', `/memberships/${m}/roles`, { auth: admin.auth, body: { name: 'Event readers', permissions: ['events.read'] } });
  const app = await call(base, 'POST', `/memberships/${m}/applications`, { auth: admin.auth, body: { name: 'stream reader', role: role.slug } });
  const basic = `Basic ${Buffer.from(`${app._id}:${app.secret}`).toString('base64')}`;
  await call(base, 'POST', `/memberships/${m}/users`, { auth: admin.auth, body: { username: 'bench-user', email_address: 'bench-user@example.com', password: PASSWORD } });
  const tokens = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    const signedIn = expectStatus(await api(base, 'POST', '/generate-token', { headers: { 'X-Service-Alias': m }, body: { username: 'bench-user', password: PASSWORD } }), 201, 'sign-in');
    tokens.push(signedIn.refresh_token);
  }
  const { FOLLOWED_EVENT_TYPES } = createRequire(import.meta.url)(`${ROOT}/packages/client/dist/stream-cache.js`);
  const allTypes = process.env.BENCH_STREAM_TYPES === 'all';
  const streamUrl = `${base}/memberships/${m}/events/stream${allTypes ? '' : `?types=${FOLLOWED_EVENT_TYPES.join(',')}`}`;

  let connected = 0;
  const refresh = (seconds) =>
    autocannon({
      url: `${base}/refresh-token?revoke=false`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      connections: CONNECTIONS,
      duration: seconds,
      setupClient: (client) => client.setBody(JSON.stringify({ token: tokens[connected++ % CONNECTIONS] })),
    });
  log('warm-up');
  await refresh(3);
  const slices = { without: [], with: [] };
  for (let slice = 0; slice < SLICES; slice++) {
    for (const way of slice % 2 === 0 ? ['without', 'with'] : ['with', 'without']) {
      const streams = way === 'with' ? await openStreams(streamUrl, basic) : undefined;
      await sleep(300);
      const [cpu, pg] = [cpuSecondsOf(service.child.pid), postgresCpuSeconds()];
      const result = await refresh(SLICE_SECONDS);
      const requests = result.requests.total;
      slices[way].push({
        rate: requests / SLICE_SECONDS,
        cpu: ((cpuSecondsOf(service.child.pid) - cpu) / requests) * 1e6,
        pg: ((postgresCpuSeconds() - pg) / requests) * 1e6,
        bytes: streams?.bytes() ?? 0,
      });
      streams?.close();
      if (result.non2xx || result.errors) log(`warning: ${result.non2xx} non-2xx, ${result.errors} errors`);
    }
  }
  await stop(service);
  await dropDatabase(SERVER_URL, databaseUrl);

  const mean = (list, key) => list.reduce((sum, item) => sum + item[key], 0) / list.length;
  const [off, on] = [slices.without, slices.with];
  console.log('');
  console.log(`Refresh (revoke=false, ${CONNECTIONS} connections) beside ${STREAMS} event stream(s) of its membership, ${allTypes ? 'every type' : "the client library's followed types"}; ${SLICES} slices of ${SLICE_SECONDS} s each way`);
  console.log(`without: ${mean(off, 'rate').toFixed(0)}/s, cpu ${mean(off, 'cpu').toFixed(0)} µs, pg ${mean(off, 'pg').toFixed(0)} µs per refresh`);
  console.log(`with:    ${mean(on, 'rate').toFixed(0)}/s, cpu ${mean(on, 'cpu').toFixed(0)} µs, pg ${mean(on, 'pg').toFixed(0)} µs per refresh; the streams got ${(mean(on, 'bytes') / SLICE_SECONDS / 1e6).toFixed(1)} MB/s`);
  console.log(`ratio with/without: ${(mean(on, 'rate') / mean(off, 'rate')).toFixed(2)}`);
}

await runMain(main);
