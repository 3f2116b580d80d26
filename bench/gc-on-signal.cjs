/**
 * Bench-only preload (bench/hostile.mjs starts the service with `--expose-gc --require` this
 * file): SIGUSR2 runs a full garbage collection, so the heap the bench reads from /metrics
 * afterwards is what the service still holds, not garbage that V8 had not collected yet.
 * Not part of the service: no route, nothing in src/.
 */
process.on('SIGUSR2', () => {
  if (typeof global.gc === 'function') global.gc();
});
