#!/usr/bin/env node
/**
 * Screenshot of the interactive API reference (/docs, Swagger UI) with headless Chromium:
 *   npm run build && node scripts/docs-screenshot.mjs [output.png]   (default docs/swagger-ui.png)
 *
 * Starts the built app in the development environment on an in-memory database, on 127.0.0.1
 * and a free port, takes the screenshot, and stops the app. Chromium: `chromium` on the PATH, or
 * CHROMIUM=/path/to/chrome. Flags keep the browser off the network except for the app itself.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const output = resolve(process.argv[2] ?? join(root, 'docs', 'swagger-ui.png'));
const chromium = process.env.CHROMIUM ?? 'chromium';
const require = createRequire(import.meta.url);

let modules;
try {
  modules = {
    config: require(join(root, 'dist/config/config.js')),
    bootstrap: require(join(root, 'dist/bootstrap.js')),
    logger: require(join(root, 'dist/common/logger.js')),
  };
} catch (error) {
  process.stderr.write(`Cannot load the built app (${error.message}). Run "npm run build" first.\n`);
  process.exit(1);
}

const config = modules.config.loadConfig({
  NODE_ENV: 'development',
  DATABASE_URL: 'memory://',
  LOG_LEVEL: 'silent',
  SETUP_TOKEN: 'docs-screenshot-only-0123456789abcdef0123',
  HOST: '127.0.0.1',
  PORT: '0',
});
const { app } = await modules.bootstrap.createApp(config, modules.logger.createLogger(config.logLevel));
await app.listen(0, '127.0.0.1');
const { port } = app.getHttpServer().address();
const url = `http://127.0.0.1:${port}/docs`;
const profile = mkdtempSync(join(tmpdir(), 'portcullis-chromium-'));
mkdirSync(dirname(output), { recursive: true });

try {
  const code = await new Promise((resolvePromise, reject) => {
    const browser = spawn(
      chromium,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--hide-scrollbars',
        `--user-data-dir=${profile}`,
        // Tall enough for every route group; DOCS_SCREENSHOT_HEIGHT overrides.
        `--window-size=1280,${Number(process.env.DOCS_SCREENSHOT_HEIGHT ?? 5600)}`,
        // Swagger UI renders from JavaScript after load: give it virtual time before the shot.
        '--virtual-time-budget=15000',
        `--screenshot=${output}`,
        url,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    browser.stderr.on('data', (chunk) => (stderr += chunk.toString('utf8')));
    browser.once('error', reject);
    browser.once('exit', (exitCode) => (exitCode === 0 ? resolvePromise(exitCode) : reject(new Error(`chromium exited with ${exitCode}:\n${stderr}`))));
  });
  process.stdout.write(`Wrote ${output} (${statSync(output).size} bytes) from ${url} (chromium exit ${code}).\n`);
} finally {
  await app.close();
  rmSync(profile, { recursive: true, force: true });
}
