/**
 * The rooms of src/, lowest first (docs/architecture-rooms.md): a room may import from itself and
 * from the rooms listed before it, never from one listed after it. A room is a top-level folder
 * of src/; `app` is the files at the root of src/. One list, read by .dependency-cruiser.cjs (a
 * rule per room) and by scripts/room-graph.mjs (the folder graph: two-way ties, cycles, arrows
 * up this order), both run by `npm run lint:layers`.
 */
const ROOM_ORDER = [
  // foundation
  'config',
  'database',
  'common',
  'permissions',
  // infrastructure
  'queue',
  'outbound',
  'openapi',
  'events',
  // tenant records every feature reads
  'memberships',
  'roles',
  'applications',
  'user-types',
  'event-log',
  // the identity core
  'sessions',
  'sign-in',
  'users',
  'tokens',
  'second-factors',
  // features built on the core
  'webhooks',
  'mail',
  'recovery',
  'token-code-policies',
  'device-codes',
  'providers',
  'oidc',
  'membership-admin',
  // access and operations
  'access',
  'metrics',
  'setup',
  'health',
  'app',
];

/** The path pattern of a room (dependency-cruiser's `path`, relative to the project root). */
function roomPath(room) {
  return room === 'app' ? '^src/[^/]+\\.ts$' : `^src/${room}/`;
}

/** The room of a path under src/ (`src/users/x.ts` → `users`, `src/main.ts` → `app`). */
function roomOf(path) {
  const rest = path.replace(/^src\//, '');
  return rest.includes('/') ? rest.slice(0, rest.indexOf('/')) : 'app';
}

module.exports = { ROOM_ORDER, roomPath, roomOf };
