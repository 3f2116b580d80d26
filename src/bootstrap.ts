import type { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express from 'express';
import type { Logger } from 'pino';
import type { AppConfig } from './config/config';
import { AppModule } from './app.module';
import { PreshapedExpressAdapter } from './common/express-adapter';
import { NestPinoLogger } from './common/logger';
import { expressErrorHandler, screenRequests } from './common/http';
import { verifyFormBytes, verifyJsonBytes } from './common/input-hygiene';
import { verifyJsonBudget } from './common/json-budget';
import { observeRequests, ServiceMetrics } from './metrics';
import { serveApiDocs } from './openapi/openapi';

/** Large enough that an oversized token reaches us and gets a 401, instead of Node's bare 431. */
const MAX_HEADER_BYTES = 64 * 1024;
/** An OAuth request or a page's form is a handful of short fields (a JWT assertion at most). */
const OIDC_FORM_LIMIT_BYTES = 64 * 1024;
const OIDC_FORM_MAX_FIELDS = 50;

export interface CreatedApp {
  app: NestExpressApplication;
  logger: Logger;
}

/**
 * Builds the whole service (used by main.ts and by the e2e tests, so both run the same thing).
 * The logger is the caller's (createLogger): it outlives the app's close, to log the shutdown,
 * and its owner closes it after (closeLogger). `testModules`: modules only a test adds beside the
 * service's own (never passed by main.ts).
 */
export async function createApp(config: AppConfig, logger: Logger, testModules: Type[] = []): Promise<CreatedApp> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, logger, testModules), new PreshapedExpressAdapter(MAX_HEADER_BYTES), {
    bodyParser: false,
    logger: new NestPinoLogger(logger),
    abortOnError: false,
  });
  app.disable('x-powered-by');
  // No ETags: answers about tokens, users and permissions are not for caching, and Express
  // would hash every response body to make one.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  // The specification: the service allows any CORS origin, unless the operator lists them.
  app.enableCors({ origin: config.corsOrigins ?? true, exposedHeaders: ['X-Request-Id', 'WWW-Authenticate'] });
  // First, so requests failing before routing (413, 415) are measured and logged too.
  app.use(observeRequests(app.get(ServiceMetrics), logger));
  app.use(
    screenRequests({
      // Both checks run on the raw bytes before JSON.parse: the text must be UTF-8 (input-hygiene.ts),
      // and the key and depth budget holds (json-budget.ts says why it is counted there).
      json: express.json({
        limit: config.bodyLimitBytes,
        type: ['application/json', 'application/*+json'],
        verify: (request, response, body, encoding) => {
          verifyJsonBytes(request, response, body, encoding);
          verifyJsonBudget(request, response, body, encoding);
        },
      }),
      // The OpenID Provider's pages and back-channel routes take forms (RFC 6749 3.2), under /oidc/
      // only (screenRequests). Flat fields only, few of them.
      form: express.urlencoded({ extended: false, limit: OIDC_FORM_LIMIT_BYTES, parameterLimit: OIDC_FORM_MAX_FIELDS, verify: verifyFormBytes }),
    }),
  );
  app.use(expressErrorHandler(logger));
  serveApiDocs(app, config);
  await app.init();
  return { app, logger };
}
