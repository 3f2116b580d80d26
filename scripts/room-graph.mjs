// The folder-level import graph of src/ (a room = a top-level folder of src/, `app` = its root
// files), from dependency-cruiser's resolution (type-only imports count; unit specs do not).
// Prints each room with the rooms it imports, then every two-way tie, every cycle of rooms and
// every arrow up the order of scripts/rooms.cjs; exits 1 when any of the three is found or a room
// is missing from the order. Run by `npm run lint:layers` (and so by CI).
//   node scripts/room-graph.mjs            the check
//   node scripts/room-graph.mjs --quiet    only the findings and the totals
import { createRequire } from 'node:module';
import { cruise } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const { ROOM_ORDER, roomOf } = createRequire(import.meta.url)('./rooms.cjs');
const quiet = process.argv.includes('--quiet');

const result = await cruise(
  ['src'],
  { exclude: { path: '\\.spec\\.ts$' }, doNotFollow: { path: 'node_modules' }, tsPreCompilationDeps: true, tsConfig: { fileName: 'tsconfig.json' } },
  {},
  { tsConfig: extractTSConfig('tsconfig.json') },
);

/** room -> room -> one file-level import behind the arrow (for the message). */
const arrows = new Map();
for (const module of result.output.modules) {
  if (!module.source.startsWith('src/')) continue;
  const from = roomOf(module.source);
  for (const dependency of module.dependencies) {
    if (!dependency.resolved.startsWith('src/')) continue;
    const to = roomOf(dependency.resolved);
    if (to === from) continue;
    if (!arrows.has(from)) arrows.set(from, new Map());
    if (!arrows.get(from).has(to)) arrows.get(from).set(to, `${module.source} -> ${dependency.resolved}`);
  }
}
const rooms = new Set(result.output.modules.filter((m) => m.source.startsWith('src/')).map((m) => roomOf(m.source)));

const findings = [];
for (const room of [...rooms].sort()) if (!ROOM_ORDER.includes(room)) findings.push(`no place in scripts/rooms.cjs: ${room}`);

for (const [from, tos] of arrows) {
  for (const [to, example] of tos) {
    if (from < to && arrows.get(to)?.has(from)) findings.push(`two-way: ${from} <-> ${to} (${example}; ${arrows.get(to).get(from)})`);
    const [a, b] = [ROOM_ORDER.indexOf(from), ROOM_ORDER.indexOf(to)];
    if (a >= 0 && b > a) findings.push(`upward: ${from} -> ${to} (${example})`);
  }
}

// Cycles of rooms: the strongly connected components of more than one room (Tarjan).
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
function visit(room) {
  index.set(room, counter);
  low.set(room, counter);
  counter += 1;
  stack.push(room);
  onStack.add(room);
  for (const next of arrows.get(room)?.keys() ?? []) {
    if (!index.has(next)) {
      visit(next);
      low.set(room, Math.min(low.get(room), low.get(next)));
    } else if (onStack.has(next)) low.set(room, Math.min(low.get(room), index.get(next)));
  }
  if (low.get(room) !== index.get(room)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    component.push(member);
  } while (member !== room);
  if (component.length > 1) cycles.push(component.sort());
}
for (const room of rooms) if (!index.has(room)) visit(room);
for (const cycle of cycles) findings.push(`cycle of ${cycle.length} rooms: ${cycle.join(', ')}`);

if (!quiet) {
  for (const room of ROOM_ORDER.filter((r) => rooms.has(r))) {
    const tos = [...(arrows.get(room)?.keys() ?? [])].sort((x, y) => ROOM_ORDER.indexOf(x) - ROOM_ORDER.indexOf(y));
    console.log(`${room} -> ${tos.join(' ') || '(nothing)'}`);
  }
}
for (const finding of findings) console.log(finding);
const total = [...arrows.values()].reduce((n, tos) => n + tos.size, 0);
const ties = findings.filter((f) => f.startsWith('two-way')).length;
const upward = findings.filter((f) => f.startsWith('upward')).length;
console.log(`rooms: ${rooms.size}, arrows: ${total}, two-way ties: ${ties}, room cycles: ${cycles.length}, upward arrows: ${upward}`);
process.exit(findings.length ? 1 : 0);
