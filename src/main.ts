import { availableParallelism } from 'node:os';

// argon2 hashes on libuv's thread pool; size it to the cores before anything touches the pool.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(4, availableParallelism()));

void import('./server').then(({ main }) => main()).catch((error: unknown) => {
  process.stderr.write(`Portcullis failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
