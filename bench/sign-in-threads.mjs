#!/usr/bin/env node
/**
 * Where a sign-in's CPU goes, thread by thread: what bounds sign-in beside raw argon2 on a machine
 * whose every core hashes (docs/benchmarks.md). Not a test: it prints figures and never fails.
 *
 *   npm run build && node bench/sign-in-threads.mjs     # about 40 s; needs PostgreSQL on 127.0.0.1:5432
 *
 * Starts the built service on a fresh database of the local PostgreSQL server with as many hashing
 * threads as `npm run bench` gives it, sets up an administrator, signs it in for BENCH_WARMUP
 * seconds (20: sign-in's own code must reach V8's optimizing tier), then for BENCH_DURATION (10)
 * at 2 connections per hashing thread, as `npm run bench` does. Printed: CPU microseconds per
 * sign-in (user + system, /proc/<pid>/task) of the main thread, of the hashing threads (the thread
 * pool's busiest), of the service's other threads (V8's workers), and of the PostgreSQL server.
 * Linux names every thread of the process `node`, so the pool is told apart by its CPU: nothing
 * else in the service keeps a thread busy for the hashes' 20 ms.
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { readdirSync } from 'node:fs';
import autocannon from 'autocannon';
import { buildIfMissing, cleanUpOnSignals, cpuSecondsOf, createDatabase, freePort, int, logAs, MAIN, postgresCpuSeconds, runMain, SERVER_URL, setUpAdmin, start, waitFor } from './support.mjs';

const log = logAs('sign-in-threads');
const WARMUP = int('BENCH_WARMUP', 20);
const DURATION = int('BENCH_DURATION', 10);
const THREADS = Number(process.env.UV_THREADPOOL_SIZE ?? availableParallelism());
const PASSWORD = 'bench admin password';
const SETUP_TOKEN = randomBytes(24).toString('hex');
/** CPU seconds (user + system) of each thread of `pid`, by thread id: a thread's /proc entry is laid out as a process's. */
function threadSeconds(pid) {
  const seconds = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const used = cpuSecondsOf(`${pid}/task/${tid}`);
    // NaN: the thread ended meanwhile.
    if (Number.isFinite(used)) seconds.set(tid, used);
  }
  return seconds;
}

await runMain(async () => {
  cleanUpOnSignals('sign-in-threads');
  buildIfMissing();
  const databaseUrl = await createDatabase(SERVER_URL, 'bench_sign_in_threads');
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = start('service', [MAIN], {
    HOST: '127.0.0.1',
    NODE_ENV: 'production',
    SETUP_TOKEN,
    UV_THREADPOOL_SIZE: String(THREADS),
    DATABASE_URL: databaseUrl,
    PORT: String(port),
  });
  await waitFor(`${base}/ping`, {}, 60_000, service);
  const { setup, membershipId } = await setUpAdmin(base, SETUP_TOKEN, PASSWORD);
  const load = {
    url: `${base}/generate-token`,
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-alias': membershipId },
    body: JSON.stringify({ username: setup.user.username, password: PASSWORD }),
    connections: THREADS * 2,
  };
  log(`warm-up, ${WARMUP} s ...`);
  await autocannon({ ...load, duration: WARMUP });

  const pid = service.child.pid;
  const before = threadSeconds(pid);
  const postgresBefore = postgresCpuSeconds();
  const result = await autocannon({ ...load, duration: DURATION });
  const after = threadSeconds(pid);
  const postgres = postgresCpuSeconds() - postgresBefore;
  const signIns = result['2xx'];
  if (signIns === 0 || result.non2xx > 0) throw new Error(`sign-in answered ${result.non2xx} non-2xx of ${result.requests.total}`);

  const perSignIn = (seconds) => (seconds * 1e6) / signIns;
  const used = [...after].map(([tid, seconds]) => ({ tid, seconds: seconds - (before.get(tid) ?? 0) }));
  const main = used.find(({ tid }) => tid === String(pid));
  const others = used.filter(({ tid }) => tid !== String(pid)).sort((a, b) => b.seconds - a.seconds);
  const sum = (threads) => threads.reduce((total, { seconds }) => total + seconds, 0);
  const figures = {
    'hashing threads': perSignIn(sum(others.slice(0, THREADS))),
    'main thread': perSignIn(main?.seconds ?? 0),
    'other threads (V8 workers)': perSignIn(sum(others.slice(THREADS))),
    'PostgreSQL server': perSignIn(postgres),
  };
  console.log(`\nsign-in, ${THREADS * 2} connections, ${DURATION} s: ${signIns} sign-ins, ${(signIns / (result.duration ?? DURATION)).toFixed(1)}/s; UV_THREADPOOL_SIZE=${THREADS}`);
  console.log('CPU µs per sign-in (user + system):');
  for (const [name, micros] of Object.entries(figures)) console.log(`  ${name.padEnd(28)} ${micros.toFixed(0).padStart(7)}`);
  const beside = figures['main thread'] + figures['other threads (V8 workers)'] + figures['PostgreSQL server'];
  console.log(`  ${'beside the hash'.padEnd(28)} ${beside.toFixed(0).padStart(7)}  (90% of raw argon2 leaves ${(figures['hashing threads'] / 9).toFixed(0)} on cores that all hash)`);
});
