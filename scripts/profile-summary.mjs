#!/usr/bin/env node
/**
 * A V8 CPU profile (.cpuprofile) as text, in µs per request: where the flame graph shows shapes,
 * this ranks numbers, so that two profiles can be compared line by line.
 *
 *   node scripts/profile-summary.mjs <file.cpuprofile> <requests> [--by function|package] [--top N] [--under TEXT]
 *
 * `requests` is what the profiled window served (bench/flame-graphs.mjs logs it beside each graph;
 * BENCH_PROFILE_DIR keeps the profiles). `--by function` (the default) ranks frames by self time,
 * then by inclusive time; `--by package` sums self time by npm package, by the service's own folder
 * (dist/<folder>), by Node.js module, or by native frame. `--under TEXT` ranks only the inclusive
 * times of frames whose name or file contains TEXT (e.g. `dist/` for the service's own code).
 *
 * Read the figures as shares, not as CPU time: the profiler samples the main thread's wall clock,
 * so a frame that wakes another process (a socket write, a thread-pool job) is charged for the
 * time the core spent elsewhere. `(idle)` is time with nothing to run.
 */
import { frameLabel, readCpuProfile } from './cpu-profile.mjs';

const [file, requestsArgument, ...rest] = process.argv.slice(2);
const option = (name, fallback) => {
  const index = rest.indexOf(`--${name}`);
  return index === -1 ? fallback : rest[index + 1];
};
const requests = Number(requestsArgument);
const by = option('by', 'function');
const top = Number(option('top', 40));
const under = option('under', undefined);
// A misspelt option would otherwise rank by function, or print nothing, without a word.
if (!file || !(requests > 0) || !['function', 'package'].includes(by) || !(top > 0)) {
  process.stderr.write('usage: node scripts/profile-summary.mjs <file.cpuprofile> <requests> [--by function|package] [--top N] [--under TEXT]\n');
  process.exit(2);
}

const { nodes, parentOf, selfTime } = readCpuProfile(file);

/** Whose code a frame is: an npm package, a folder of the service (dist/), a Node.js module, a native frame, or its file. */
function packageOf({ callFrame: frame }) {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : `native ${frame.functionName}`;
  const inModules = frame.url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (inModules) return inModules[1];
  if (frame.url.includes('/dist/')) return `dist/${frame.url.split('/dist/')[1].split('/')[0]}`;
  if (frame.url.startsWith('node:')) return `node:${frame.url.slice(5).split('/')[0]}`;
  return frame.url.replace(/^file:\/\//, '');
}

function add(map, key, value) {
  map.set(key, (map.get(key) ?? 0) + value);
}

// Piped into `head`, the reader leaves early: that ends the listing, it is no failure (it threw EPIPE).
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(0);
});

function print(title, totals) {
  process.stdout.write(`${title} (µs per request)\n`);
  for (const [key, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${(micros / requests).toFixed(1).padStart(9)}  ${key}\n`);
  }
}

const self = new Map();
const inclusive = new Map();
let total = 0;
for (const [id, micros] of selfTime) {
  const node = nodes.get(id);
  total += micros;
  add(self, by === 'package' ? packageOf(node) : frameLabel(node.callFrame), micros);
  // Each frame name once per stack: a recursive frame is not counted twice.
  const seen = new Set();
  for (let current = id; current !== undefined; current = parentOf.get(current)) {
    const name = frameLabel(nodes.get(current).callFrame);
    if (!seen.has(name)) add(inclusive, name, micros);
    seen.add(name);
  }
}

process.stdout.write(`${file}: ${(total / requests).toFixed(1)} µs sampled per request over ${requests} requests\n`);
if (under) {
  print(`inclusive, frames matching "${under}"`, new Map([...inclusive].filter(([name]) => name.includes(under))));
} else {
  print(by === 'package' ? 'self, by package' : 'self', self);
  if (by !== 'package') print('inclusive', inclusive);
}
