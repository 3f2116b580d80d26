import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { AppConfig } from '../config/config';
import { applyDocumentRules } from './document-rules';
import { addRequestBodyExamples } from './request-examples';

/** Where the machine-readable description is served (the specification: a path ending in v1.json). */
export const OPENAPI_DOCUMENT_PATH = '/openapi/v1.json';
/** Where the interactive reference (Swagger UI) is served. */
export const API_DOCS_PATH = '/docs';

const DESCRIPTION = [
  'Multi-tenant identity and access service: sign-in, JWT tokens, permissions, event log, webhooks.',
  '',
  'Authorize with one of two schemes (button "Authorize"):',
  '- **bearer**: an access token of a user. Get one with `POST /generate-token` (header `X-Service-Alias: <membership id>`,',
  '  body `{"username", "password"}`) and paste `access_token`.',
  '- **basic**: the id and secret of an application (username = application id, password = secret).',
  '',
  'Every error answers `{"statusCode", "errorCode", "message", "errors"?}`; a 401 also carries `WWW-Authenticate`.',
  'Membership routes are under `/memberships/{membershipId}`: a token of another membership gets 403 AccessDenied,',
  'an unknown membership 404 MembershipNotFound.',
].join('\n');

/** The OpenAPI document of every route the app serves, built from the controllers' annotations. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle('Portcullis')
    .setDescription(DESCRIPTION)
    .setVersion('1')
    // Relative: Try-it-out calls the service that serves this page, on whatever host and port.
    .addServer('/', 'This service')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'A user access token: `Authorization: Bearer <access_token>` (from POST /generate-token).',
      },
      'bearer',
    )
    .addBasicAuth(
      {
        type: 'http',
        scheme: 'basic',
        description:
          'An application: `Authorization: Basic <application_id>:<secret>`, written raw as the specification shows, ' +
          'or the standard base64 of `<application_id>:<secret>` (what browsers and `curl -u` send). ' +
          'In this UI enter the application id as username and its secret as password.',
      },
      'basic',
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'X-Setup-Token',
        description:
          'First run only (POST /setup): SETUP_TOKEN, or the token the service wrote to its log at start when SETUP_TOKEN is unset.',
      },
      'setup_token',
    );
  const document = SwaggerModule.createDocument(app, builder.build(), {
    // Operation ids name the controller and its method: stable and unique across the API.
    operationIdFactory: (controllerKey, methodKey) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
  // As package.json's "license"; DocumentBuilder.setLicense would also write an empty url.
  document.info.license = { name: 'UNLICENSED (proprietary)' };
  addRequestBodyExamples(document);
  applyDocumentRules(document);
  return document;
}

/**
 * Serves GET /openapi/v1.json and GET /docs in the development environment only; elsewhere
 * they do not exist and answer the contract's 404. Must run before `app.init()`, so the
 * routes come before the not-found handler.
 */
export function serveApiDocs(app: INestApplication, config: AppConfig): boolean {
  if (config.nodeEnv !== 'development') return false;
  SwaggerModule.setup(API_DOCS_PATH, app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: OPENAPI_DOCUMENT_PATH,
    raw: ['json'],
    customSiteTitle: 'Portcullis API',
    swaggerOptions: {
      // An administrator authorizes once and keeps it across reloads while managing webhooks.
      persistAuthorization: true,
      displayRequestDuration: true,
      // Past 150 rows (tags and operations) Swagger UI renders only what is on screen, so an
      // operation far down the page is reached by its link (#/webhooks/Webhooks_create) or by
      // filtering the tags, not by the browser's find.
      deepLinking: true,
      filter: true,
      // Tags stay in the document's own order (setup and tokens first: where one starts).
      // Without this the page sends the document's URL to validator.swagger.io for a badge.
      validatorUrl: 'none',
    },
  });
  return true;
}

/** Sorts object keys at every level, so the committed document is byte-for-byte reproducible. */
export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeysDeep((value as Record<string, unknown>)[key]);
    return sorted;
  }
  return value;
}

/** The committed form of the document (openapi.json at the repository root). */
export function canonicalJson(document: unknown): string {
  return `${JSON.stringify(sortKeysDeep(document), null, 2)}\n`;
}
