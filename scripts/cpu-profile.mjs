/**
 * A V8 CPU profile (`node --cpu-prof`, a .cpuprofile) read for the scripts that draw it
 * (flame-graph.mjs) and rank it (profile-summary.mjs): its nodes, each node's parent, and the
 * microseconds of samples that ended in each node.
 */
import { readFileSync } from 'node:fs';

/** The samples of the first `skipMicros` (start-up, data preparation) are left out. */
export function readCpuProfile(file, skipMicros = 0) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfTime = new Map();
  let elapsed = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    elapsed += delta;
    if (elapsed >= skipMicros) selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
  });
  return { nodes, parentOf, selfTime };
}

/** A package's files by package (`pg-protocol/dist/parser.js`), the service's by `dist/`. */
const where = (frame) =>
  frame.url.includes('/node_modules/') ? frame.url.replace(/^.*node_modules\//, '') : frame.url.replace(/^.*\/dist\//, 'dist/').replace(/^file:\/\//, '');

/** A frame by function, file and line: what frames are merged and ranked by. */
export const frameLabel = (frame) => `${frame.functionName || '(anonymous)'} ${where(frame)}${frame.lineNumber >= 0 ? `:${frame.lineNumber + 1}` : ''}`;
