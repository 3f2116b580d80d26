/**
 * Bench-only preload (bench/flame-graphs.mjs starts the service with `--require` this file): the
 * first SIGUSR2 starts V8's CPU profiler, the next stops it and writes the profile (a .cpuprofile)
 * to the file named by PROFILE_OUT, and so on, one profile per pair of signals (each overwrites the
 * last: the bench reads it between pairs). So a profile holds one measured window, without the
 * start-up, the data preparation or the warm-up. Not part of the service: nothing in src/.
 */
const { writeFileSync } = require('node:fs');
const { Session } = require('node:inspector');

const session = new Session();
session.connect();
let profiling = false;

process.on('SIGUSR2', () => {
  if (!profiling) {
    profiling = true;
    session.post('Profiler.enable', () => session.post('Profiler.start'));
    return;
  }
  profiling = false;
  session.post('Profiler.stop', (error, result) => {
    // The bench waits for one of these lines on stderr: a failure must say so, or it waits forever.
    try {
      if (error) throw error;
      writeFileSync(process.env.PROFILE_OUT, JSON.stringify(result.profile));
      process.stderr.write('profile written\n');
    } catch (failure) {
      process.stderr.write(`profile failed: ${failure.message}\n`);
    }
  });
});
