#!/usr/bin/env node
/**
 * The raw argon2id verify rate with the service's parameters (m=19456 KiB, t=2, p=1), as many
 * verifies in parallel as the thread pool has threads. Run with the service's UV_THREADPOOL_SIZE;
 * prints one JSON line {rate, count, p50, p99, threads, seconds}.
 *   UV_THREADPOOL_SIZE=4 node bench/argon2-rate.mjs [seconds]
 */
import argon2 from 'argon2';

const seconds = Number(process.argv[2] ?? 5);
const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
const password = 'correct horse battery staple';
const hash = await argon2.hash(password, { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 });

const latencies = [];
const deadline = performance.now() + seconds * 1000;
async function loop() {
  while (performance.now() < deadline) {
    const started = performance.now();
    if (!(await argon2.verify(hash, password))) throw new Error('argon2 verify failed');
    latencies.push(performance.now() - started);
  }
}
const started = performance.now();
await Promise.all(Array.from({ length: threads }, loop));
const elapsed = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
process.stdout.write(`${JSON.stringify({ rate: latencies.length / elapsed, count: latencies.length, p50: at(0.5), p99: at(0.99), threads, seconds: elapsed })}\n`);
