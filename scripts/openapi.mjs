#!/usr/bin/env node
/**
 * Writes openapi.json at the repository root: the OpenAPI document the app serves at
 * /openapi/v1.json, with keys sorted so that it is byte-for-byte reproducible.
 *
 *   npm run openapi            (= npm run build && node scripts/openapi.mjs)
 *   node scripts/openapi.mjs --check   exits 1 when the committed file is out of date
 *
 * Uses the built app in dist/ (run `npm run build` first) on an in-memory database; it starts
 * no HTTP listener and touches no other database.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'openapi.json');
const require = createRequire(import.meta.url);

let modules;
try {
  modules = {
    config: require(join(root, 'dist/config/config.js')),
    bootstrap: require(join(root, 'dist/bootstrap.js')),
    logger: require(join(root, 'dist/common/logger.js')),
    openapi: require(join(root, 'dist/openapi/openapi.js')),
  };
} catch (error) {
  process.stderr.write(`Cannot load the built app (${error.message}). Run "npm run build" first.\n`);
  process.exit(1);
}

const config = modules.config.loadConfig({
  NODE_ENV: 'development',
  DATABASE_URL: 'memory://',
  LOG_LEVEL: 'silent',
  // Any value: with none set the app would generate one and log it.
  SETUP_TOKEN: 'openapi-generation-only-0123456789abcdef',
  HOST: '127.0.0.1',
  PORT: '0',
});
const { app } = await modules.bootstrap.createApp(config, modules.logger.createLogger(config.logLevel));
let generated;
try {
  generated = modules.openapi.canonicalJson(modules.openapi.buildOpenApiDocument(app));
} finally {
  await app.close();
}

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // missing: out of date
  }
  if (committed !== generated) {
    process.stderr.write('openapi.json is out of date: run "npm run openapi" and commit the result.\n');
    process.exit(1);
  }
  process.stdout.write('openapi.json is up to date.\n');
} else {
  writeFileSync(target, generated);
  const document = JSON.parse(generated);
  const operations = Object.values(document.paths).reduce((sum, item) => sum + Object.keys(item).length, 0);
  process.stdout.write(`Wrote ${target}: ${Object.keys(document.paths).length} paths, ${operations} operations.\n`);
}
