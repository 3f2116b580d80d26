import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { canonicalJson } from '../../src/openapi/openapi';
import { startTestApp, type TestApp } from '../support/app';
import { type Installation, setupInstallation, unique } from '../support/api';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';
import { findExecutable, scrapeMetrics, startReceiver } from '../support/operations';
import { routeTable } from '../support/route-table';
import { isOAuthRoute } from '../../src/common/oauth-error';

const ROOT = join(__dirname, '..', '..');

/** The parts of an OpenAPI document these tests read. */
interface ApiOperationDoc {
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string }[];
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}
interface ApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, ApiOperationDoc>>;
  components: { securitySchemes: Record<string, { type: string; scheme: string; bearerFormat?: string; description?: string }> };
}

/** Polls until the check passes (metrics of work that finishes after the response, e.g. webhook calls). */
async function eventually<T>(check: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function createWebhook(t: { url: string }, install: Installation, event: string, url: string): Promise<void> {
  const res = await request(t.url)
    .post(`/memberships/${install.admin.membershipId}/webhooks`)
    .set('Authorization', install.admin.auth)
    .send({ name: unique('hook'), event, status: 'active', try_count: 1, request: { method: 'POST', url } });
  if (res.status !== 201) throw new Error(`webhook create failed: ${res.status} ${JSON.stringify(res.body)}`);
}

describe('GET /metrics', () => {
  let t: TestApp;
  let install: Installation;

  beforeAll(async () => {
    // The webhook test below calls a receiver on loopback.
    t = await startTestApp({ env: { ...ALLOW_LOOPBACK_RECEIVERS } });
    install = await setupInstallation(t);
  });
  afterAll(async () => t?.close());

  it('is public and answers the Prometheus text format', async () => {
    const { headers } = await scrapeMetrics(t);
    expect(headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(headers.get('cache-control')).toBe('no-store');
  });

  it('counts requests by method, route TEMPLATE and status, never by raw path', async () => {
    const membershipId = install.admin.membershipId;
    const roleId = unique('missing-role');
    const strayId = unique('stray');
    const role = await t.http().get(`/memberships/${membershipId}/roles/${roleId}`).set('Authorization', install.admin.auth);
    expect(role.status).toBe(404);
    await t.http().get(`/nowhere/${strayId}`).expect(404);
    for (let i = 0; i < 3; i++) await t.http().get('/ping').expect(200);
    // Failures before routing count too, under the route they addressed: 415 from the content-type check.
    await t.http().post('/generate-token').set('Content-Type', 'text/plain').send('x').expect(415);
    await t.http().post(`/memberships/${membershipId}/roles`).set('Content-Type', 'text/plain').send('x').expect(415);
    await t.http().post(`/nowhere/${strayId}`).set('Content-Type', 'text/plain').send('x').expect(415);

    const { text, metrics } = await scrapeMetrics(t);
    expect(metrics.types.get('portcullis_http_requests_total')).toBe('counter');
    expect(
      metrics.value('portcullis_http_requests_total', { method: 'GET', route: '/memberships/:membershipId/roles/:id', status_code: '404' }),
    ).toBe(1);
    expect(metrics.value('portcullis_http_requests_total', { method: 'GET', route: '/ping', status_code: '200' })).toBe(3);
    expect(metrics.value('portcullis_http_requests_total', { method: 'POST', route: '/generate-token', status_code: '415' })).toBe(1);
    expect(metrics.value('portcullis_http_requests_total', { method: 'POST', route: '/memberships/:membershipId/roles', status_code: '415' })).toBe(1);
    // A path no route serves stays unmatched.
    expect(metrics.value('portcullis_http_requests_total', { method: 'POST', route: 'unmatched', status_code: '415' })).toBe(1);
    expect(metrics.value('portcullis_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBeGreaterThanOrEqual(1);
    // No id from a URL reaches a label.
    for (const id of [membershipId, roleId, strayId, install.admin.userId]) expect(text).not.toContain(id);
    const routes = new Set(metrics.find('portcullis_http_requests_total').map((sample) => sample.labels.route));
    for (const route of routes) expect(route === 'unmatched' || /^\/[A-Za-z0-9/:_-]*$/.test(route)).toBe(true);
  });

  it('keeps a duration histogram per series that agrees with the counter', async () => {
    await t.http().get('/me').set('Authorization', install.admin.auth).expect(200);
    const { metrics } = await scrapeMetrics(t);
    expect(metrics.types.get('portcullis_http_request_duration_seconds')).toBe('histogram');
    const counted = metrics.find('portcullis_http_requests_total');
    expect(counted.length).toBeGreaterThan(0);
    for (const series of counted) {
      const labels = series.labels;
      const buckets = metrics.find('portcullis_http_request_duration_seconds_bucket', labels);
      const bounds = buckets.map((bucket) => (bucket.labels.le === '+Inf' ? Infinity : Number(bucket.labels.le)));
      expect(bounds).toEqual([...bounds].sort((a, b) => a - b));
      const counts = buckets.map((bucket) => bucket.value);
      for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThanOrEqual(counts[i - 1]);
      expect(counts[counts.length - 1]).toBe(series.value);
      expect(metrics.value('portcullis_http_request_duration_seconds_count', labels)).toBe(series.value);
      const sum = metrics.value('portcullis_http_request_duration_seconds_sum', labels);
      expect(sum).toBeGreaterThan(0);
      expect(sum / series.value).toBeLessThan(10);
    }
  });

  it('shows the requests in progress by route template (the scrape itself is one)', async () => {
    const { metrics } = await scrapeMetrics(t);
    expect(metrics.types.get('portcullis_http_requests_in_progress')).toBe('gauge');
    expect(metrics.value('portcullis_http_requests_in_progress', { method: 'GET', route: '/metrics' })).toBe(1);
    expect(metrics.find('portcullis_http_requests_in_progress', { route: '/ping' })).toEqual([]);
  });

  it('counts outgoing webhook calls by outcome and shows the webhook queue', async () => {
    const receiver = await startReceiver();
    try {
      await createWebhook(t, install, 'TokenVerified', receiver.url);
      await t.http().get('/verify-token').set('Authorization', install.admin.auth).expect(200);
      await receiver.waitForRequests(1);
      const { metrics } = await eventually(async () => {
        const scraped = await scrapeMetrics(t);
        expect(scraped.metrics.value('portcullis_outgoing_http_requests_total', { kind: 'webhook', outcome: 'success' })).toBe(1);
        // The worker finishes after the call: it records the result event first.
        expect(scraped.metrics.value('portcullis_queue_processed_total', { queue: 'webhooks' })).toBe(1);
        return scraped;
      });
      expect(metrics.types.get('portcullis_outgoing_http_request_duration_seconds')).toBe('histogram');
      expect(metrics.value('portcullis_outgoing_http_request_duration_seconds_count', { kind: 'webhook', outcome: 'success' })).toBe(1);
      expect(metrics.value('portcullis_outgoing_http_request_duration_seconds_sum', { kind: 'webhook', outcome: 'success' })).toBeGreaterThan(0);

      const queue = { queue: 'webhooks' };
      expect(metrics.value('portcullis_queue_capacity', queue)).toBe(10_000);
      expect(metrics.value('portcullis_queue_depth', queue)).toBe(0);
      expect(metrics.value('portcullis_queue_in_flight', queue)).toBe(0);
      expect(metrics.value('portcullis_queue_dropped_total', queue)).toBe(0);
      expect(metrics.types.get('portcullis_queue_dropped_total')).toBe('counter');
    } finally {
      await receiver.close();
    }
  });

  it('exposes the Node.js process: memory, GC, event loop lag and utilization, handles, thread pool', async () => {
    const { metrics } = await scrapeMetrics(t);
    expect(metrics.value('process_resident_memory_bytes')).toBeGreaterThan(1_000_000);
    expect(metrics.value('nodejs_heap_size_used_bytes')).toBeGreaterThan(1_000_000);
    expect(metrics.value('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(metrics.types.get('nodejs_gc_duration_seconds')).toBe('histogram');
    expect(metrics.value('nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
    const utilization = metrics.value('nodejs_eventloop_utilization_ratio');
    expect(utilization).toBeGreaterThan(0);
    expect(utilization).toBeLessThanOrEqual(1);
    // By type; their sum is the total (the `_total` gauges of prom-client fail promtool).
    const handles = metrics.find('nodejs_active_handles').reduce((sum, sample) => sum + sample.value, 0);
    expect(handles).toBeGreaterThanOrEqual(1);
    expect(metrics.types.get('nodejs_active_requests')).toBe('gauge');
    expect(metrics.types.get('nodejs_active_resources')).toBe('gauge');
    expect(metrics.types.has('nodejs_active_handles_total')).toBe(false);
    expect(metrics.value('nodejs_libuv_threadpool_size')).toBeGreaterThanOrEqual(1);
  });

  // promtool ships with Debian's `prometheus` package; .ci/run installs it.
  const promtool = findExecutable('promtool');
  const inCi = process.env.CI === 'true';
  (promtool || inCi ? it : it.skip)('passes `promtool check metrics` (lint of names, types and help)', async () => {
    if (!promtool) throw new Error('promtool is not installed (apt-get install prometheus); CI must run this check');
    await t.http().get('/ping').expect(200);
    await t.http().get('/memberships/unknown/roles').expect(401);
    const { text } = await scrapeMetrics(t);
    const checked = spawnSync(promtool, ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 });
    expect({ status: checked.status, output: `${checked.stdout}${checked.stderr}`.trim() }).toEqual({ status: 0, output: '' });
  });

  it('does not serve the API documentation outside development', async () => {
    for (const path of ['/docs', '/docs/', '/openapi/v1.json', '/docs/swagger-ui-init.js']) {
      const res = await t.http().get(path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, errorCode: 'NotFound', message: expect.any(String) });
    }
  });
});

describe('API documentation', () => {
  let dev: TestApp;
  let production: TestApp;
  let document: ApiDocument;

  beforeAll(async () => {
    dev = await startTestApp({ env: { NODE_ENV: 'development' } });
    production = await startTestApp({ env: { NODE_ENV: 'production' } });
    const res = await dev.http().get('/openapi/v1.json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    document = res.body as ApiDocument;
  });
  afterAll(async () => {
    await dev?.close();
    await production?.close();
  });

  it('serves an OpenAPI 3 document with the bearer and basic security schemes', () => {
    expect(document.openapi).toMatch(/^3\./);
    expect(document.info).toMatchObject({ title: 'Portcullis', version: '1' });
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    expect(document.components.securitySchemes.basic).toMatchObject({ type: 'http', scheme: 'basic' });
    expect(document.components.securitySchemes.basic.description).toMatch(/raw/);
    expect(document.components.securitySchemes.basic.description).toMatch(/base64/);
  });

  it('documents every route: summary, tag, success answer with its schema, path parameters, errors and auth', () => {
    const problems: string[] = [];
    // The device approval page is HTML for people (with its stylesheet and script), not API; so are
    // the OpenID Provider's authorization pages, its logout and their stylesheet (redirects and HTML).
    const oidcPage = /^\/oidc\/:membershipId\/(authorize|interaction\/|logout|pages\.css)/;
    const routes = routeTable(dev.app).filter(
      (route) => route.access !== 'NOT A NEST ROUTE' && route.path !== '/device' && !route.path.startsWith('/device/') && !oidcPage.test(route.path),
    );
    expect(routes.length).toBeGreaterThan(20);
    for (const route of routes) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const where = `${route.method} ${path}`;
      const operation = document.paths?.[path]?.[route.method.toLowerCase()];
      if (!operation) {
        problems.push(`${where}: missing from the document`);
        continue;
      }
      if (!operation.summary) problems.push(`${where}: no summary (@ApiOperation)`);
      if (!operation.tags?.length) problems.push(`${where}: no tag (@ApiTags)`);
      const statuses = Object.keys(operation.responses ?? {});
      const success = statuses.filter((status) => /^2/.test(status));
      if (!success.length) problems.push(`${where}: no success answer (@ApiResponse)`);
      for (const status of success) {
        if (status !== '204' && !operation.responses[status].content) problems.push(`${where}: ${status} answer without a schema`);
      }
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        if (!operation.parameters?.some((parameter) => parameter.in === 'path' && parameter.name === name)) {
          problems.push(`${where}: path parameter ${name} not documented`);
        }
      }
      if (route.access !== 'public' && !route.access.startsWith('public ')) {
        const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
        if (!schemes.includes('bearer') && !schemes.includes('basic')) problems.push(`${where}: no security scheme (@ApiAuth())`);
        if (!statuses.includes('401')) problems.push(`${where}: 401 not documented`);
      }
      if (route.access.startsWith('permission') && !statuses.includes('403')) problems.push(`${where}: 403 not documented`);
      const bodyless = route.path === '/ping' || route.path === '/metrics' || route.path === '/healthcheck';
      if (!bodyless && !statuses.some((status) => /^4/.test(status))) problems.push(`${where}: no error answer documented (ApiErrors)`);
      // The OpenID Provider's back-channel routes answer OAuth's error object (RFC 6749 5.2), as the contract says.
      const errorSchema = isOAuthRoute({ path: route.path.replace(/:[A-Za-z]+/g, 'x') }) ? 'OAuthErrorDto' : 'ErrorBodySchema';
      for (const status of statuses.filter((s) => /^[45]/.test(s) && s !== '500')) {
        const schema = operation.responses[status].content?.['application/json']?.schema;
        if (schema?.$ref !== `#/components/schemas/${errorSchema}`) problems.push(`${where}: ${status} is not the error body (${errorSchema})`);
      }
    }
    if (problems.length) throw new Error(`Incomplete API documentation:\n${problems.join('\n')}`);
  });

  it('matches the committed openapi.json', () => {
    const committedPath = join(ROOT, 'openapi.json');
    let committed = '';
    try {
      committed = readFileSync(committedPath, 'utf8');
    } catch {
      // reported below
    }
    const generated = canonicalJson(document);
    if (committed !== generated) {
      const before = committed ? (JSON.parse(committed) as Pick<ApiDocument, 'paths'>) : { paths: {} };
      const operations = (doc: Pick<ApiDocument, 'paths'>) =>
        new Set(Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)));
      const old = operations(before);
      const now = operations(document);
      const added = [...now].filter((op) => !old.has(op));
      const removed = [...old].filter((op) => !now.has(op));
      throw new Error(
        'openapi.json at the repository root is out of date with the app.\n' +
          'Regenerate it with `npm run openapi` (npm run build && node scripts/openapi.mjs) and commit it.\n' +
          `Operations added: ${added.join(', ') || 'none'}; removed: ${removed.join(', ') || 'none'}` +
          (added.length || removed.length ? '' : '; the difference is in schemas, descriptions or answers'),
      );
    }
    expect(generated).toBe(committed);
  });

  it('serves Swagger UI at /docs with the document and both ways to authorize', async () => {
    const page = await dev.http().get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('swagger-ui');
    expect(page.text).toContain('<title>Portcullis API</title>');
    const init = await dev.http().get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('"persistAuthorization": true');
    expect(init.text).toContain('"securitySchemes"');
    // The UI's own files come from the service itself, not from a CDN.
    const bundle = await dev.http().get('/docs/swagger-ui-bundle.js').expect(200);
    expect(bundle.text.length).toBeGreaterThan(100_000);
    expect(page.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[a-z0-9.-]+\/[^"']*\.(js|css)/i);
  });

  it('does not serve the documentation in production (contract 404)', async () => {
    for (const path of ['/docs', '/openapi/v1.json', '/docs/swagger-ui-init.js', '/docs/swagger-ui-bundle.js']) {
      const res = await production.http().get(path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, errorCode: 'NotFound', message: expect.any(String) });
    }
  });

  it('keeps a registry per app instance: traffic of one app never shows in another', async () => {
    await production.http().get('/ping').expect(200);
    await production.http().get('/ping').expect(200);
    const { metrics } = await scrapeMetrics(dev);
    expect(metrics.find('portcullis_http_requests_total', { route: '/ping' })).toEqual([]);
    expect(metrics.value('portcullis_http_requests_total', { route: '/openapi/v1.json', status_code: '200' })).toBe(1);
    const other = await scrapeMetrics(production);
    expect(other.metrics.value('portcullis_http_requests_total', { route: '/ping', status_code: '200' })).toBe(2);
  });
});
