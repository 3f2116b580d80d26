#!/usr/bin/env node
/**
 * Webhook amplification check (issue 21 point 4): a small template that would render far past the
 * rendered-output limit must cost a failed attempt, not memory. Not a test: it prints figures.
 *
 *   npm run build && node bench/webhook-amplification.mjs
 *
 * It starts the built service (dist/) in this process on 127.0.0.1 with an in-memory embedded
 * database and a local HTTP receiver on 127.0.0.1 that answers 500 (so an unbounded service would
 * render every attempt of try_count 5). It creates a user type with an array custom field, a
 * webhook on UserCreated whose body holds 1000 placeholders of that field (about 60 KB each once
 * rendered: 60 MB per attempt), then creates BENCH_EVENTS users carrying a 60 KB value. It
 * prints the result events (a failed attempt with the template error is expected), what the
 * receiver got (nothing is expected) and the resident memory before, at its peak and after.
 *
 * Bounded: it stops creating users and ends when resident memory passes BENCH_RSS_LIMIT_MB or
 * after BENCH_MAX_SECONDS.
 *
 * Environment (all optional):
 *   BENCH_EVENTS=8              users created (each one event)
 *   BENCH_MAX_SECONDS=40        bound of the whole run after setup
 *   BENCH_RSS_LIMIT_MB=1500     stop early above this resident memory
 *   DIST_DIR=dist               where the built service is
 */
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, availableParallelism()));
// Imported after that line: a static import would be read first.
const { api, startInProcess, listenOnLoopback, setUpAdmin, expectStatus, int, onCleanup, runMain } = await import('./support.mjs');

const require = createRequire(import.meta.url);
const DIST = resolve(process.env.DIST_DIR ?? new URL('../dist', import.meta.url).pathname);
const EVENTS = int('BENCH_EVENTS', 8);
const MAX_SECONDS = int('BENCH_MAX_SECONDS', 40);
const RSS_LIMIT_MB = int('BENCH_RSS_LIMIT_MB', 1500);
const SETUP_TOKEN = `bench-setup-token-${randomBytes(16).toString('hex')}`;
const PASSWORD = 'bench user password';
/** 15 strings of 4000 characters: about 60 KB of JSON, inside the custom field limits (64 KiB, 4096 per string). */
const BLOB = Array.from({ length: 15 }, (_, i) => `${i}`.padEnd(4000, 'x'));
const PLACEHOLDERS = 1000;

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

/** Counts requests and body bytes; answers 500 so that every attempt of try_count is made. */
async function startReceiver() {
  const state = { received: 0, bytes: 0 };
  const server = createServer((request, response) => {
    request.on('data', (chunk) => {
      state.bytes += chunk.length;
    });
    request.on('end', () => {
      state.received++;
      response.writeHead(500, { 'Content-Type': 'text/plain' }).end('no');
    });
  });
  const close = await listenOnLoopback(server);
  return {
    state,
    url: `http://127.0.0.1:${server.address().port}/amplified`,
    close,
  };
}

async function main() {
  const { QueueRegistry } = require(`${DIST}/queue/queue-registry.js`);

  const receiver = await startReceiver();
  onCleanup(() => receiver.close());
  const { app, base } = await startInProcess(DIST, { SETUP_TOKEN, DATABASE_URL: 'memory://', SHUTDOWN_DRAIN_MS: '2000' });
  const queue = app.get(QueueRegistry).get('webhooks');

  const { membershipId, auth } = await setUpAdmin(base, SETUP_TOKEN, PASSWORD);
  const m = `/memberships/${membershipId}`;
  const type = expectStatus(
    await api(base, 'POST', `${m}/user-types`, { auth, body: { name: 'Amplifier', properties: { blob: { type: 'array' } } } }),
    201,
    'create user type',
  );
  const template = '{{document.blob}}'.repeat(PLACEHOLDERS);
  const hook = expectStatus(
    await api(base, 'POST', `${m}/webhooks`, {
      auth,
      body: { name: 'amplified', event: 'UserCreated', status: 'active', try_count: 5, request: { method: 'POST', url: receiver.url, body: { blob: template } } },
    }),
    201,
    'create webhook',
  );
  const blobBytes = Buffer.byteLength(JSON.stringify(BLOB));
  console.log(`Webhook amplification: ${EVENTS} events, template ${Buffer.byteLength(template)} bytes with ${PLACEHOLDERS} placeholders of a ${blobBytes}-byte field`);
  console.log(`(unbounded: about ${mb(blobBytes * PLACEHOLDERS)} per attempt, try_count 5); stops above ${RSS_LIMIT_MB} MB resident or after ${MAX_SECONDS} s`);

  globalThis.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  let overLimit = false;
  const sampler = setInterval(() => {
    const rss = process.memoryUsage().rss;
    rssPeak = Math.max(rssPeak, rss);
    if (rss > RSS_LIMIT_MB * 1024 * 1024) overLimit = true;
  }, 20);

  const started = performance.now();
  const deadline = Date.now() + MAX_SECONDS * 1000;
  let created = 0;
  for (let i = 0; i < EVENTS && !overLimit && Date.now() < deadline; i++) {
    const username = `amp${i}-${randomBytes(3).toString('hex')}`;
    expectStatus(
      await api(base, 'POST', `${m}/users`, {
        auth,
        body: { username, email_address: `${username}@example.com`, password: PASSWORD, user_type: type.slug, blob: BLOB },
      }),
      201,
      'create user',
    );
    created++;
  }
  // Wait (bounded) until every call has ended: nothing queued or running.
  while (!overLimit && Date.now() < deadline && (queue.depth > 0 || queue.inFlight > 0 || queue.processed < created)) {
    await new Promise((done) => setTimeout(done, 50));
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  globalThis.gc?.();
  const rssAfter = process.memoryUsage().rss;
  rssPeak = Math.max(rssPeak, rssAfter);

  const failed = overLimit
    ? []
    : expectStatus(
        await api(base, 'POST', `${m}/events/_query?limit=100`, { auth, body: { where: { event_type: 'WebhookRequestFailed', 'document.webhook_id': hook._id } } }),
        200,
        'query result events',
      ).items;
  const templateErrors = failed.filter((event) => event.document.response === null && /nothing was sent/.test(event.document.error ?? ''));

  console.log('');
  console.log(`events triggered         ${created} of ${EVENTS} in ${seconds.toFixed(1)} s${overLimit ? `  [STOPPED: resident memory passed ${RSS_LIMIT_MB} MB]` : ''}`);
  console.log(`calls finished           ${queue.processed} (queue depth ${queue.depth}, in flight ${queue.inFlight})`);
  console.log(`failed attempts          ${overLimit ? 'not read (stopped early)' : `${failed.length}, of which ${templateErrors.length} with the template error, nothing sent`}`);
  if (templateErrors[0]) console.log(`  error                  ${templateErrors[0].document.error_code ?? '(no code)'}: ${templateErrors[0].document.error}`);
  console.log(`receiver got             ${receiver.state.received} requests, ${mb(receiver.state.bytes)}`);
  console.log(`resident memory          before ${mb(rssBefore)}, peak ${mb(rssPeak)}, after ${mb(rssAfter)}  (growth at peak ${mb(rssPeak - rssBefore)})`);
  const bounded = !overLimit && receiver.state.received === 0 && templateErrors.length === created;
  console.log(bounded ? 'BOUNDED: every event cost one failed attempt with the template error; nothing was sent' : 'NOT BOUNDED: see the figures above');
  process.exitCode = bounded ? 0 : 1;
  // A stopped run may leave huge calls in flight: do not wait for them at shutdown.
  if (overLimit) process.exit(1);
}

await runMain(main, (error) => console.error(error instanceof Error ? error.stack : String(error)));
