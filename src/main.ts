import { availableParallelism } from 'node:os';

// argon2 hashes on libuv's thread pool; one thread per core before anything touches the pool.
// More threads than cores only make each hash wait longer (measured: the same sign-in rate,
// twice the latency with 4 threads on 2 cores).
process.env.UV_THREADPOOL_SIZE ??= String(availableParallelism());

void import('./server').then(({ main }) => main()).catch((error: unknown) => {
  process.stderr.write(`Portcullis failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
