import type { AddressInfo } from 'node:net';
import type { Type } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import request from 'supertest';
import { createApp } from '../../src/bootstrap';
import { closeLogger, createLogger } from '../../src/common/logger';
import { type AppConfig, loadConfig } from '../../src/config/config';
import { createServerDatabase, serverUrl } from './database';
import { embeddedImage } from './migrated-template';
import { closedPort } from './ports';

export const TEST_SETUP_TOKEN = 'test-setup-token-0123456789abcdef0123456789';

export interface TestApp {
  app: NestExpressApplication;
  config: AppConfig;
  /** http://127.0.0.1:<port> — the app really listens; tests speak HTTP to it. */
  url: string;
  /** supertest bound to `url`. */
  http: () => ReturnType<typeof request>;
  /** Share the same database with another instance (multi-instance tests). */
  databaseUrl: string;
  close: () => Promise<void>;
}

export interface TestAppOptions {
  /** Environment overrides, exactly as an operator would set them. */
  env?: Record<string, string>;
  /** Use this database instead of a fresh one (a second instance on the same server database). */
  databaseUrl?: string;
  /** Log here instead of the service's own logger (a spec that asserts what was logged). */
  logger?: Logger;
  /** Test-only modules booted beside the service's own (routes that exist only for a test). */
  modules?: Type[];
  /**
   * Listen on a port chosen before the start and set PUBLIC_URL to it, as an operator of the
   * OpenID Provider does (its issuers are `<PUBLIC_URL>/oidc/{m}`). Default: port 0, no PUBLIC_URL.
   */
  publicUrl?: boolean;
}

/** Boots the real AppModule on a fresh database and listens on 127.0.0.1. */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  let databaseUrl = options.databaseUrl ?? 'memory://';
  let drop: (() => Promise<void>) | undefined;
  const server = serverUrl();
  if (!options.databaseUrl && server) {
    const created = await createServerDatabase(server, { migrated: true });
    databaseUrl = created.url;
    drop = created.drop;
  }
  const chosenPort = options.publicUrl ? String(await closedPort()) : undefined;
  const loaded = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SETUP_TOKEN: TEST_SETUP_TOKEN,
    HOST: '127.0.0.1',
    PORT: chosenPort ?? '0',
    ...(chosenPort ? { PUBLIC_URL: `http://127.0.0.1:${chosenPort}` } : {}),
    ...options.env,
    DATABASE_URL: databaseUrl,
  });
  // An in-memory database starts from the migrated image (./migrated-template.ts), not from initdb.
  const config: AppConfig =
    loaded.database.kind === 'embedded' && loaded.database.dataDir === null
      ? { ...loaded, database: { ...loaded.database, image: await embeddedImage() } }
      : loaded;
  // The app's own logger unless the test brings one; closed with the app (its flush timer would
  // otherwise keep the closed app alive for the rest of the worker's files).
  const logger = options.logger ?? createLogger(config.logLevel);
  const { app } = await createApp(config, logger, options.modules);
  await app.listen(config.port, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  let closed = false;
  return {
    app,
    config,
    url,
    databaseUrl,
    http: () => request(url),
    close: async () => {
      if (closed) return;
      closed = true;
      await app.close();
      if (!options.logger) closeLogger(logger);
      if (drop) await drop();
    },
  };
}
