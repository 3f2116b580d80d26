/** @type {import('jest').Config} */
const swc = ['@swc/jest', {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'commonjs' },
}];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test', '<rootDir>/packages/client/src', '<rootDir>/examples'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  // Nest 12, jose, openid-client and PGlite ship ES modules only; Jest must transform them too.
  transform: { '^.+\\.(t|j|mj|cj)s$': swc },
  transformIgnorePatterns: ['/node_modules/(?!(@nestjs|jose|openid-client|oauth4webapi|@electric-sql|file-type|strtok3|token-types|@tokenizer|uint8array-extras)/)'],
  // The client package by its published name, from its sources (as tsconfig.json's "paths").
  moduleNameMapper: {
    '^@portcullis/client$': '<rootDir>/packages/client/src/index.ts',
    '^@portcullis/client/nest$': '<rootDir>/packages/client/src/nest-index.ts',
  },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  // e2e files boot real apps on real databases; a loaded two-core CI machine needs the margin.
  testTimeout: 120000,
  // e2e files each boot their own app on their own database. Three workers on two cores: tests
  // also wait on real time (keep-alives, lock windows, drain deadlines), which left the cores
  // idle 27% of a two-worker run and 15% of a three-worker one. The embedded run took 411 s
  // against 453 with two (484 against 536 before the test image was trimmed; four: 516), the
  // server run 396 s with either (2026-12-02).
  maxWorkers: 3,
  // A worker's last file leaves its heap full of garbage (1.4 GB used, 170-390 MB of it live
  // after a full collection, not growing from file to file: no leak), and tearing down a 2.2 GB
  // process took 460 ms after its 'exit' event (2026-12-02), near Jest's 500 ms before "failed to
  // exit gracefully". A handle left open still keeps a worker alive past any wait and still warns.
  workerGracefulExitTimeout: 5000,
  // The default output, and one progress line per finished file (files done of all, time so far).
  reporters: ['default', '<rootDir>/test/support/progress-reporter.cjs'],
};
