/**
 * The same protected API with Express middleware.
 *
 *   PORTCULLIS_URL=http://localhost:3000/ PORTCULLIS_MEMBERSHIP_ID=<membership id> \
 *     PORT=4001 npx tsx --tsconfig examples/protected-api/tsconfig.json examples/protected-api/express-app.ts
 *
 * Listens on HOST (default 127.0.0.1: a development example stays off the network unless asked).
 *
 * It imports the client package by name, as a real API does; in this repository the name resolves to
 * packages/client/src (tsconfig.json "paths"), so the example runs without a build.
 */
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { portcullis, PortcullisClient, type PortcullisSettings, principalOf } from '@portcullis/client';

/** Builds the application (not listening yet). Invalid settings throw here. */
export function createApp(settings: PortcullisSettings): Express {
  const guard = portcullis(new PortcullisClient(settings));
  const app = express();

  // Public.
  app.get('/health', guard.unauthorized(), (_req, res) => {
    res.json({ status: 'ok' });
  });

  // Route-level middleware: Express has matched the route, so the resource (`orders`, from
  // req.route.path) and the route parameters are known.
  app.get('/orders', guard.authorized({ action: 'read' }), (_req, res) => {
    res.json([{ id: 'o-1' }, { id: 'o-2' }]);
  });
  app.get('/orders/:orderId', guard.authorized({ action: 'read', object: '{orderId}' }), (req, res) => {
    res.json({ id: req.params['orderId'], readBy: principalOf(req)?.identity._id });
  });
  app.delete('/orders/:orderId', guard.authorized({ action: 'delete', object: '{route::orderId}' }), (_req, res) => {
    res.status(204).end();
  });

  // Query, header and env placeholders.
  app.get(
    '/reports',
    guard.authorized({ resource: 'reports-{env::REGION}', action: '{query::kind}', object: '{header::X-Tenant}' }),
    (req, res) => {
      res.json({ kind: req.query['kind'], rows: [] });
    },
  );

  // Token only: the handler decides.
  app.get('/profile', guard.selfAuthorized(), (req, res) => {
    const caller = principalOf(req);
    res.json({ id: caller?.identity._id, kind: caller?.tokenKind, role: caller?.identity.role ?? null });
  });

  // Mounted before routing (app.use): give the template; route placeholders are not known here.
  app.use('/admin', guard.authorized({ route: '/admin', action: 'manage' }));
  app.get('/admin/stats', (_req, res) => {
    res.json({ requests: 0 });
  });

  return app;
}

export function main(): void {
  const app = createApp({
    BaseUrl: process.env['PORTCULLIS_URL'] ?? '',
    MembershipId: process.env['PORTCULLIS_MEMBERSHIP_ID'] ?? '',
    BasicTokenCacheTTL: Number(process.env['PORTCULLIS_BASIC_CACHE_TTL'] ?? 0),
    // With both set, answers are kept per token and dropped by the live event stream (a revocation reaches this API within a second).
    CacheTTL: Number(process.env['PORTCULLIS_CACHE_TTL'] ?? 0),
    StreamCredentials: process.env['PORTCULLIS_STREAM_CREDENTIALS'] || undefined,
  });
  const host = process.env['HOST'] ?? '127.0.0.1';
  const port = Number(process.env['PORT'] ?? 4001);
  const server = app.listen(port, host, () => {
    const bound = server.address() as AddressInfo;
    console.log(`Protected Express API on http://${bound.address}:${bound.port}`);
  });
}

if (require.main === module) {
  try {
    main();
  } catch (error: unknown) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
