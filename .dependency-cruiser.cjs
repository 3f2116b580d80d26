/**
 * The house's layering as a test (`npm run lint:layers`, run by .ci/run after lint).
 *
 * Why dependency-cruiser and not eslint-plugin-boundaries: the rules here are about the import
 * graph as a whole (cycles across many files, rooms and their order), which dependency-cruiser
 * resolves itself (TypeScript paths, type-only imports) and checks in one pass over src/; the
 * eslint plugin sees one file at a time, has no cycle rule of its own (import/no-cycle is a
 * second plugin, slow on this tree) and would tie the layering to the lint configuration.
 *
 * Rooms, lowest first, are listed once in scripts/rooms.cjs (docs/architecture-rooms.md): a file
 * may import from its own room or a lower one, never a higher one. This file checks it file by
 * file; scripts/room-graph.mjs checks the folder graph as a whole (a cycle between two rooms is a
 * cycle even when no two files form one).
 */
const { ROOM_ORDER, roomPath } = require('./scripts/rooms.cjs');

/** One rule per room: nothing in it may import from any room above it. */
const upwardImports = ROOM_ORDER.slice(0, -1).map((room, index) => ({
  name: `no-upward-import-from-${room}`,
  comment: `${room} sits below ${ROOM_ORDER.slice(index + 1).join(', ')}: it may not import from them`,
  severity: 'error',
  from: { path: roomPath(room) },
  to: { path: ROOM_ORDER.slice(index + 1).map(roomPath) },
}));

module.exports = {
  forbidden: [
    ...upwardImports,
    {
      name: 'no-circular',
      comment: 'Import cycles make the order of initialisation an accident; break them by moving the shared piece down.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'src-never-imports-test',
      comment: 'The service runs without its tests: helpers shared by unit specs live in test/support/unit/.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|examples|bench)/' },
    },
    {
      name: 'client-stands-alone',
      comment: 'packages/client is published on its own (@portcullis/client): it may import nothing from the service, its tests or its examples.',
      severity: 'error',
      from: { path: '^packages/client/src/' },
      to: { path: '^(src|test|examples)/' },
    },
    {
      name: 'client-uses-only-its-peers',
      comment:
        'The client has no runtime dependency: besides Node\'s own modules it may import only its peer dependencies (packages/client/package.json), and @nestjs/* only from its /nest entry.',
      severity: 'error',
      from: { path: '^packages/client/src/', pathNot: '^packages/client/src/testing/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'], pathNot: '^node_modules/(@nestjs/(common|core)|express|@types/express)/' },
    },
    {
      name: 'client-entry-loads-no-nest',
      comment: 'The main entry (index.ts) must load without NestJS, an optional peer an Express API does not install.',
      severity: 'error',
      from: { path: '^packages/client/src/(index|client|express|request|settings|errors|expression|cache|transport)\\.ts$' },
      to: { path: ['^node_modules/@nestjs/', '^packages/client/src/nest'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'every-file-has-a-room',
      comment: 'A new top-level folder must be given its room in scripts/rooms.cjs (and docs/architecture-rooms.md).',
      severity: 'error',
      from: { path: '^src/', pathNot: ROOM_ORDER.map(roomPath) },
      to: {},
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Specs may reach into test/ and examples/; the rules are about the running service.
    exclude: { path: ['\\.spec\\.ts$'] },
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a type from a higher room is still an arrow pointing up.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
