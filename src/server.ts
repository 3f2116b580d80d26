import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { type AppConfig, ConfigError, loadConfig } from './config/config';
import { createApp } from './bootstrap';
import { createLogger } from './common/logger';
import { describeTarget } from './database/describe';
import { ServiceMetrics } from './metrics';
import { API_DOCS_PATH } from './openapi/openapi';
import { SetupService } from './setup/setup.service';
import { EventStreams } from './event-log/event-streams';
import { SERVICE_VERSION } from './common/version';

export async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const app = await startListening(config, logger);
  installGracefulShutdown(app, logger, { drainMs: config.shutdownDrainMs });
}

/**
 * Builds the app, listens, and logs the start in one line a person can read: version, URL,
 * database and whether the installation is set up. Before it, only when not set up, the
 * setup token line (SetupService). Nest's own start lines are at debug level.
 */
export async function startListening(config: AppConfig, logger: Logger): Promise<NestExpressApplication> {
  const { app } = await createApp(config, logger);
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `http://${shownHost}:${port}`;
  const database = describeTarget(config.database);
  const setUp = await app.get(SetupService).isSetUp();
  const docs = config.nodeEnv === 'development' ? `${url}${API_DOCS_PATH}` : undefined;
  logger.info(
    { version: SERVICE_VERSION, url, database, environment: config.nodeEnv, setUp, ...(docs ? { docs } : {}) },
    `Portcullis ${SERVICE_VERSION} listening on ${url}; database: ${database}; ` +
      (setUp ? 'set up' : 'not set up yet: POST /setup with the setup token') +
      (docs ? `; API docs: ${docs}` : ''),
  );
  return app;
}

/** Time left for module shutdown hooks beyond the queue drain itself (database close, timers). */
const MODULE_SHUTDOWN_SLACK_MS = 10_000;
/** Connections still open once every request is answered (mid-headers, say) get this long. */
const CONNECTION_CLOSE_GRACE_MS = 1_000;

export interface ShutdownOptions {
  /** Longest wait for in-flight requests, and again for the queues to drain (SHUTDOWN_DRAIN_MS). */
  drainMs: number;
  signals?: NodeJS.Signals[];
  exit?: (code: number) => void;
}

/**
 * On SIGTERM or SIGINT: stop accepting connections, let the requests in flight finish (at most
 * `drainMs`), then `app.close()`, which runs the modules' shutdown hooks (queue owners drain for
 * at most `drainMs` and log what their queue lost, the sweeper stops, the database closes last),
 * and exit 0. Requests cut off at the deadline are logged as lost. A second signal exits at
 * once with 1.
 */
export function installGracefulShutdown(app: NestExpressApplication, logger: Logger, options: ShutdownOptions): void {
  const server: Server = app.getHttpServer();
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let stopping = false;
  const inFlight = new Set<ServerResponse>();
  let onIdle: (() => void) | undefined;
  // Clients must not reuse a connection that is about to go away.
  const closeAfterAnswer = (response: ServerResponse) => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
  };

  // Ahead of Express, so the header is set before any handler can answer.
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    inFlight.add(response);
    if (stopping) closeAfterAnswer(response);
    response.once('close', () => {
      inFlight.delete(response);
      if (inFlight.size === 0) onIdle?.();
    });
  });

  const requestsFinished = (timeoutMs: number): Promise<boolean> =>
    new Promise((resolve) => {
      if (inFlight.size === 0) return resolve(true);
      const timer = setTimeout(() => resolve(false), timeoutMs);
      onIdle = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });

  const pendingQueueItems = () =>
    app.get(ServiceMetrics).queues().map((queue) => ({ name: queue.name, pending: queue.depth + queue.inFlight }));

  async function shutdown(signal: NodeJS.Signals): Promise<void> {
    const started = Date.now();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    logger.info(
      { signal, inFlightRequests: inFlight.size, drainMs: options.drainMs },
      'shutdown: no longer accepting connections, finishing requests in flight',
    );
    inFlight.forEach(closeAfterAnswer);
    // Open event streams never finish by themselves: end them now, clients reconnect elsewhere with Last-Event-ID.
    app.get(EventStreams).closeAll();
    // Keep-alive connections with no request in flight would hold the server open.
    server.closeIdleConnections();
    const idleSweeper = setInterval(() => server.closeIdleConnections(), 50);
    const finished = await requestsFinished(options.drainMs);
    clearInterval(idleSweeper);
    const requestsLost = finished ? 0 : inFlight.size;
    if (!finished) {
      logger.warn({ requestsLost }, 'shutdown: requests still in flight after the drain time; closing their connections');
      server.closeAllConnections();
    }
    server.closeIdleConnections();
    const lingering = setTimeout(() => server.closeAllConnections(), CONNECTION_CLOSE_GRACE_MS);
    await closed;
    clearTimeout(lingering);

    logger.info({ queues: pendingQueueItems() }, 'shutdown: HTTP server closed; draining queues and stopping modules');
    const watchdog = setTimeout(() => {
      logger.error({ afterMs: Date.now() - started }, 'shutdown: modules did not stop in time; exiting');
      exit(1);
    }, options.drainMs + MODULE_SHUTDOWN_SLACK_MS);
    await app.close();
    clearTimeout(watchdog);

    logger.info({ requestsLost, durationMs: Date.now() - started }, 'shutdown complete');
  }

  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal, inFlightRequests: inFlight.size }, 'shutdown: second signal, exiting at once');
      exit(1);
      return;
    }
    stopping = true;
    shutdown(signal).then(
      () => exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of options.signals ?? (['SIGTERM', 'SIGINT'] as NodeJS.Signals[])) process.on(signal, onSignal);
}
