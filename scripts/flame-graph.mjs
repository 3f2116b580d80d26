#!/usr/bin/env node
/**
 * A V8 CPU profile (`node --cpu-prof`, a .cpuprofile) as a flame graph in one SVG file (root at the
 * top, callees below), for
 * docs/flame-graphs/ (docs/benchmarks.md, "Where a request's time goes", says how they are made).
 *
 *   node scripts/flame-graph.mjs <profile.cpuprofile> <out.svg> [title] [requests] [skip seconds]
 *
 * Idle time is left out, so the widths are shares of the busy time. Frames are merged by function,
 * file and line along the stack; those under 0.2% of the busy time are not drawn. Colours say whose
 * code a frame is: the service's own (dist/), NestJS, Express and its router, the PostgreSQL driver
 * and Drizzle, JWT libraries, logging and metrics, Node itself. With `requests` (how many the
 * profiled run answered), each frame's tooltip gives its CPU microseconds per request as well.
 * With `skip seconds`, the samples of the profile's first seconds (start-up, data preparation) are
 * left out.
 */
import { writeFileSync } from 'node:fs';
import { frameLabel, readCpuProfile } from './cpu-profile.mjs';

const [input, output, title = input, requestsArg, skipArg] = process.argv.slice(2);
if (!input || !output) {
  process.stderr.write('usage: node scripts/flame-graph.mjs <profile.cpuprofile> <out.svg> [title] [requests] [skip seconds]\n');
  process.exit(2);
}
const requests = Number(requestsArg ?? 0);
const skipMicros = Number(skipArg ?? 0) * 1e6;
const { nodes, parentOf, selfTime } = readCpuProfile(input, skipMicros);

const WIDTH = 1200;
const ROW = 16;
const MIN_SHARE = 0.002;

const SKIPPED = new Set(['(idle)', '(root)']);

/** The merged tree: children by label, time including descendants. */
const root = { label: 'all busy time', total: 0, children: new Map() };
for (const [id, micros] of selfTime) {
  const leaf = nodes.get(id);
  if (leaf.callFrame.functionName === '(idle)') continue;
  const stack = [];
  for (let current = id; current !== undefined; current = parentOf.get(current)) {
    const frame = nodes.get(current).callFrame;
    if (!SKIPPED.has(frame.functionName)) stack.push(frameLabel(frame));
  }
  root.total += micros;
  let parent = root;
  for (const label of stack.reverse()) {
    let child = parent.children.get(label);
    if (!child) parent.children.set(label, (child = { label, total: 0, children: new Map() }));
    child.total += micros;
    parent = child;
  }
}

// Tested against a frame's label ("function file:line"), in this order: @nestjs/jwt is a JWT library before it is NestJS.
const COLOURS = [
  [/ dist\//, '#e8a33d'], // the service's own (packages' files start with their name)
  [/ (jsonwebtoken|jws|jwa|@nestjs\/jwt|jose)\//, '#9b59b6'],
  [/ @nestjs\//, '#d9534f'],
  [/ (express|router|body-parser|cors|path-to-regexp)\//, '#5b8def'],
  [/ (pg|pg-pool|pg-protocol|pg-types|postgres-[a-z]+|drizzle-orm)\//, '#4cae4c'],
  [/ (pino|prom-client|lru-cache|rxjs)\//, '#17a2b8'],
  [/ node:/, '#aaaaaa'],
];
const colourOf = (label) => COLOURS.find(([pattern]) => pattern.test(label))?.[1] ?? '#cccccc';
const escape = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const rects = [];
let depth = 0;
function draw(node, x, level) {
  const width = (node.total / root.total) * WIDTH;
  if (node.total / root.total < MIN_SHARE) return;
  depth = Math.max(depth, level);
  const share = ((100 * node.total) / root.total).toFixed(1);
  const perRequest = requests > 0 ? `, ${(node.total / requests).toFixed(1)} µs per request` : '';
  const text = width > 40 ? escape(node.label).slice(0, Math.floor(width / 7)) : '';
  rects.push({ x, level, width, fill: colourOf(node.label), tip: `${escape(node.label)}: ${share}%${perRequest}`, text });
  let childX = x;
  for (const child of [...node.children.values()].sort((a, b) => b.total - a.total)) {
    draw(child, childX, level + 1);
    childX += (child.total / root.total) * WIDTH;
  }
}
draw(root, 0, 0);

// Root at the top (an icicle graph): the request's entry points are read first, callees below.
const height = (depth + 1) * ROW + 40;
const y = (level) => 24 + level * ROW;
const svg = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" font-family="monospace" font-size="11">`,
  `<text x="4" y="16" font-size="13">${escape(title)} (busy ${(root.total / 1000).toFixed(0)} ms${requests > 0 ? `, ${(root.total / requests).toFixed(0)} µs per request` : ''}; hover a frame)</text>`,
  ...rects.map(
    (r) =>
      `<g><title>${r.tip}</title><rect x="${r.x.toFixed(2)}" y="${y(r.level)}" width="${Math.max(0.5, r.width - 0.5).toFixed(2)}" height="${ROW - 1}" fill="${r.fill}"/>` +
      (r.text ? `<text x="${(r.x + 2).toFixed(2)}" y="${y(r.level) + 11}">${r.text}</text>` : '') +
      '</g>',
  ),
  '</svg>',
].join('\n');
writeFileSync(output, svg);
process.stdout.write(`${output}: ${rects.length} frames, ${depth + 1} deep, busy ${(root.total / 1000).toFixed(0)} ms\n`);
