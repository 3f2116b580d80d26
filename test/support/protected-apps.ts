/**
 * Support for the client-library e2e tests: third-party APIs (NestJS and Express) protected by
 * `@portcullis/client` (packages/client), a recording HTTP proxy that sits between the library and the real service (to
 * count calls, serve the service under a path prefix, or answer like a failing service), and
 * helpers to create callers with chosen permissions through the service's own API.
 *
 * Both test APIs expose the same routes with the same protection, so one table of expectations
 * runs against each. Handlers answer what the library let through: the route, the verified
 * caller and the permission the service allowed.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Controller,
  Delete,
  Get,
  HttpCode,
  type INestApplication,
  Module,
  Param,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import express, { type Request } from 'express';
import request from 'supertest';
import {
  Authorized,
  Permission,
  PortcullisCaller,
  PortcullisClient,
  PortcullisModule,
  type PortcullisPrincipal,
  type PortcullisSettings,
  portcullis,
  principalOf,
  SelfAuthorized,
  Unauthorized,
} from '@portcullis/client/nest';
import { createApp as createExampleExpressApp } from '../../examples/protected-api/express-app';
import { createApp as createExampleNestApp } from '../../examples/protected-api/nest-app';
import type { TestApp } from './app';
import { type Installation, type SignedIn, signIn, unique } from './api';

// ---------------------------------------------------------------------------------------------
// What a handler answers once the library let the request through.

export interface HandlerAnswer {
  route: string;
  /** Verified caller id, null on public routes. */
  caller: string | null;
  kind: string | null;
  /** Normalized expression the service allowed (authorized routes only). */
  permission: string | null;
  params?: Record<string, string>;
}

function answer(route: string, principal: PortcullisPrincipal | undefined, params?: Record<string, string>): HandlerAnswer {
  return {
    route,
    caller: principal?.identity._id ?? null,
    kind: principal?.tokenKind ?? null,
    permission: principal?.permission ?? null,
    ...(params === undefined ? {} : { params }),
  };
}

// ---------------------------------------------------------------------------------------------
// The NestJS test API. Every Portcullis decorator combination the tests need, on purpose.

@Controller('public')
class PublicController {
  @Get('ping')
  @Unauthorized()
  ping(): HandlerAnswer {
    return answer('public.ping', undefined);
  }
}

/** No mode anywhere: public, and the @Permission below must do nothing. */
@Controller('open')
class OpenController {
  @Get(':thingId')
  @Permission({ resource: 'vault', action: 'open', object: '{thingId}' })
  get(@Param('thingId') thingId: string, @PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('open.get', caller, { thingId });
  }
}

/**
 * Controller-wide: `<caller>.orders.read.<orderId>`. On the list route `{orderId}` has no value
 * and is kept as written (`%7BorderId%7D`).
 */
@Controller('orders')
@Authorized({ action: 'read', object: '{orderId}' })
class OrdersController {
  @Get()
  list(@PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('orders.list', caller);
  }

  /** Handler mode over the controller's: public. */
  @Get('public/summary')
  @Unauthorized()
  summary(@PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('orders.summary', caller);
  }

  @Get(':orderId')
  get(@Param('orderId') orderId: string, @PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('orders.get', caller, { orderId });
  }

  /** Handler segment over the controller's: `<caller>.orders.delete.<orderId>`. */
  @Delete(':orderId')
  @HttpCode(200)
  @Permission({ action: 'delete' })
  remove(@Param('orderId') orderId: string, @PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('orders.delete', caller, { orderId });
  }

  /** Handler mode over the controller's: token only, no permission. */
  @Get(':orderId/notes')
  @SelfAuthorized()
  notes(@Param('orderId') orderId: string, @PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('orders.notes', caller, { orderId });
  }
}

/** `<caller>.reports-<env REGION>.<query kind>.<header X-Tenant>`. */
@Controller('reports')
@Authorized({ resource: 'reports-{env::REGION}', action: '{query::kind}', object: '{header::X-Tenant}' })
class ReportsController {
  @Get()
  list(@PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('reports.list', caller);
  }
}

/** A resource the service's own admin role holds (`users.*`), for admin and Basic callers. */
@Controller('directory')
@Authorized({ resource: 'users', action: 'read' })
class DirectoryController {
  @Get(':userId')
  @Permission({ object: '{userId}' })
  get(@Param('userId') userId: string, @PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('directory.get', caller, { userId });
  }

  @Delete(':userId')
  @HttpCode(200)
  @Permission({ action: 'delete', object: '{route::userId}' })
  remove(@Param('userId') userId: string, @PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('directory.delete', caller, { userId });
  }
}

@Controller('profile')
@SelfAuthorized()
class ProfileController {
  @Get()
  me(@PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('profile.me', caller);
  }

  /** Handler mode over the controller's: `<caller>.audit.read.*`. */
  @Get('audit')
  @Authorized({ resource: 'audit', action: 'read' })
  audit(@PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('profile.audit', caller);
  }
}

@Controller('docs')
@Unauthorized()
class DocsController {
  @Get()
  index(@PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('docs.index', caller);
  }

  /** Handler mode over the controller's; resource from the route: `<caller>.drafts.write.*`. */
  @Get('drafts')
  @Authorized({ action: 'write' })
  drafts(@PortcullisCaller() caller?: PortcullisPrincipal): HandlerAnswer {
    return answer('docs.drafts', caller);
  }
}

@Module({})
class NestTestApiModule {}

// ---------------------------------------------------------------------------------------------
// The Express test API: the same routes, with route-level middleware.

function buildExpressTestApi(settings: PortcullisSettings): { app: express.Express; client: PortcullisClient } {
  const client = new PortcullisClient(settings);
  const guard = portcullis(client);
  const app = express();
  const params = (req: Request): Record<string, string> => ({ ...(req.params as Record<string, string>) });

  app.get('/public/ping', guard.unauthorized(), (_req, res) => {
    res.json(answer('public.ping', undefined));
  });
  // No middleware: public.
  app.get('/open/:thingId', (req, res) => {
    res.json(answer('open.get', principalOf(req), params(req)));
  });
  app.get('/orders', guard.authorized({ action: 'read', object: '{orderId}' }), (req, res) => {
    res.json(answer('orders.list', principalOf(req)));
  });
  app.get('/orders/public/summary', guard.unauthorized(), (req, res) => {
    res.json(answer('orders.summary', principalOf(req)));
  });
  app.get('/orders/:orderId', guard.authorized({ action: 'read', object: '{orderId}' }), (req, res) => {
    res.json(answer('orders.get', principalOf(req), params(req)));
  });
  app.delete('/orders/:orderId', guard.authorized({ action: 'delete', object: '{orderId}' }), (req, res) => {
    res.json(answer('orders.delete', principalOf(req), params(req)));
  });
  app.get('/orders/:orderId/notes', guard.selfAuthorized(), (req, res) => {
    res.json(answer('orders.notes', principalOf(req), params(req)));
  });
  app.get(
    '/reports',
    guard.authorized({ resource: 'reports-{env::REGION}', action: '{query::kind}', object: '{header::X-Tenant}' }),
    (req, res) => {
      res.json(answer('reports.list', principalOf(req)));
    },
  );
  app.get('/directory/:userId', guard.authorized({ resource: 'users', action: 'read', object: '{userId}' }), (req, res) => {
    res.json(answer('directory.get', principalOf(req), params(req)));
  });
  app.delete(
    '/directory/:userId',
    guard.authorized({ resource: 'users', action: 'delete', object: '{route::userId}' }),
    (req, res) => {
      res.json(answer('directory.delete', principalOf(req), params(req)));
    },
  );
  app.get('/profile', guard.selfAuthorized(), (req, res) => {
    res.json(answer('profile.me', principalOf(req)));
  });
  app.get('/profile/audit', guard.authorized({ resource: 'audit', action: 'read' }), (req, res) => {
    res.json(answer('profile.audit', principalOf(req)));
  });
  app.get('/docs', (req, res) => {
    res.json(answer('docs.index', principalOf(req)));
  });
  app.get('/docs/drafts', guard.authorized({ action: 'write' }), (req, res) => {
    res.json(answer('docs.drafts', principalOf(req)));
  });
  // Mounted before routing: the parameter is unknown there, so `{section}` stays as written.
  app.use('/admin', guard.authorized({ route: '/admin/:section', action: 'manage', object: '{section}' }));
  app.get('/admin/:section', (req, res) => {
    res.json(answer('admin.section', principalOf(req), params(req)));
  });
  return { app, client };
}

// ---------------------------------------------------------------------------------------------
// Running the protected APIs on 127.0.0.1.

export type ApiKind = 'nest' | 'express';

export interface ProtectedApi {
  kind: ApiKind;
  /** http://127.0.0.1:<port> */
  url: string;
  http: () => ReturnType<typeof request>;
  close: () => Promise<void>;
}

async function listenExpress(app: express.Express, onClose: () => void): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      onClose();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function listenNest(app: INestApplication): Promise<{ url: string; close: () => Promise<void> }> {
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as http.Server).address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

function protectedApi(kind: ApiKind, listening: { url: string; close: () => Promise<void> }): ProtectedApi {
  return { kind, url: listening.url, http: () => request(listening.url), close: listening.close };
}

/** The test API of the given kind, protected with these settings, listening on 127.0.0.1. */
export async function startTestApi(kind: ApiKind, settings: PortcullisSettings): Promise<ProtectedApi> {
  if (kind === 'express') {
    const { app, client } = buildExpressTestApi(settings);
    return protectedApi(kind, await listenExpress(app, () => client.close()));
  }
  const app = await NestFactory.create(
    {
      module: NestTestApiModule,
      imports: [PortcullisModule.forRoot(settings)],
      controllers: [
        PublicController,
        OpenController,
        OrdersController,
        ReportsController,
        DirectoryController,
        ProfileController,
        DocsController,
      ],
    },
    { logger: false },
  );
  return protectedApi(kind, await listenNest(app));
}

/** The example app of `examples/protected-api` of the given kind, listening on 127.0.0.1. */
export async function startExampleApi(kind: ApiKind, settings: PortcullisSettings): Promise<ProtectedApi> {
  if (kind === 'express') {
    // The example keeps its client to itself; its kept-alive sockets close with the service.
    return protectedApi(kind, await listenExpress(createExampleExpressApp(settings), () => undefined));
  }
  const app = await createExampleNestApp(settings);
  app.useLogger(false);
  return protectedApi(kind, await listenNest(app));
}

// ---------------------------------------------------------------------------------------------
// A recording proxy between the library and the service.

export interface ProxiedCall {
  /** Path as the service sees it (prefix removed), without the query: `/whoami`, `/roles/check-permission`. */
  path: string;
  /** Path as the proxy received it. */
  receivedPath: string;
  authorization: string | undefined;
  /** The `permission` query parameter of a check-permission call, decoded. */
  permission: string | null;
}

/**
 * - `forward`: pass every call to the service;
 * - `fail`: answer every call with `failureStatus` and an error body, without the service;
 * - `fail-permission-checks`: forward `/whoami`, fail `/roles/check-permission`;
 * - `hang`: accept the call and never answer (the library's deadline must end it).
 */
export type ProxyMode = 'forward' | 'fail' | 'fail-permission-checks' | 'hang';

/** The service's answer to one call, received by the proxy and held back from the library. */
export interface HeldAnswer {
  /** Settles once the service has answered (the answer is then in the proxy's hands). */
  answered: Promise<void>;
  /** Passes the answer on to the library. */
  release(): void;
}

/**
 * HTTP proxy on 127.0.0.1 that serves the service under `prefix` (default `/`) and records every
 * call the library makes. Calls outside the prefix get a plain-text 404, as a gateway would.
 */
export class ServiceProxy {
  readonly calls: ProxiedCall[] = [];
  mode: ProxyMode = 'forward';
  failureStatus = 500;
  /** Delay before forwarding each call, to let concurrent requests pile up. */
  delayMs = 0;
  /** Calls held in `hang` mode, and how many of them the caller has since given up (closed). */
  readonly hung = { held: 0, closedByCaller: 0 };
  /** While true, event stream calls answer 503 (the client library's cache loses its stream). */
  refuseStreams = false;
  /** While true, the event streams pass no byte on and new ones get no answer, their connections left open (`stallStreams`). */
  private streamsStalled = false;
  private readonly openStreams = new Set<http.ServerResponse>();
  /** The service's side of each open event stream, to stop passing it on. */
  private readonly upstreamStreams = new Set<http.IncomingMessage>();
  private hold: { path: string; answered: () => void; released: Promise<void> } | undefined;

  private constructor(
    private readonly server: http.Server,
    private readonly target: URL,
    private readonly prefix: string,
    /** http://127.0.0.1:<port><prefix> */
    readonly baseUrl: string,
  ) {}

  static async start(target: string, prefix = '/'): Promise<ServiceProxy> {
    const holder: { proxy?: ServiceProxy } = {};
    const server = http.createServer((req, res) => holder.proxy?.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    holder.proxy = new ServiceProxy(server, new URL(target), prefix, `http://127.0.0.1:${port}${prefix}`);
    return holder.proxy;
  }

  /** Calls to one service path (`/whoami`, `/roles/check-permission`). */
  count(path: string): number {
    return this.calls.filter((c) => c.path === path).length;
  }

  /** Expressions the library asked the service about, in order. */
  get permissions(): string[] {
    return this.calls.filter((c) => c.path === '/roles/check-permission').map((c) => c.permission ?? '');
  }

  /** Cuts the event streams passing through, and refuses new ones until `refuseStreams` is false again. */
  cutStreams(): void {
    this.refuseStreams = true;
    for (const res of this.openStreams) res.destroy();
    this.openStreams.clear();
  }

  /**
   * A partition: the event streams stay connected but no byte passes any more (no FIN, no RST),
   * and a new stream is accepted but never answered. Until `cutStreams` and `reset`.
   */
  stallStreams(): void {
    this.streamsStalled = true;
    for (const upstream of this.upstreamStreams) {
      upstream.unpipe();
      upstream.pause();
    }
  }

  /** Forwards the next call to `path` at once, but holds the service's answer back until `release`. */
  holdNextAnswer(path: string): HeldAnswer {
    let answered!: () => void;
    let release!: () => void;
    const answeredPromise = new Promise<void>((resolve) => (answered = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.hold = { path, answered, released };
    return { answered: answeredPromise, release };
  }

  reset(): void {
    this.refuseStreams = false;
    this.streamsStalled = false;
    this.hold = undefined;
    this.calls.length = 0;
    this.mode = 'forward';
    this.failureStatus = 500;
    this.delayMs = 0;
    this.hung.held = 0;
    this.hung.closedByCaller = 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const received = new URL(req.url ?? '/', 'http://proxy');
    if (!received.pathname.startsWith(this.prefix)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not under the service prefix');
      return;
    }
    const path = `/${received.pathname.slice(this.prefix.length)}`;
    this.calls.push({
      path,
      receivedPath: received.pathname,
      authorization: req.headers.authorization,
      permission: received.searchParams.get('permission'),
    });
    if (path.endsWith('/events/stream')) {
      if (this.refuseStreams) {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ statusCode: 503, errorCode: 'AuthenticationServiceUnavailable', message: 'cut' }));
        return;
      }
      this.openStreams.add(res);
      res.on('close', () => this.openStreams.delete(res));
      if (this.streamsStalled) return;
    }
    if (this.mode === 'hang') {
      this.hung.held++;
      res.on('close', () => this.hung.closedByCaller++);
      return;
    }
    const failing = this.mode === 'fail' || (this.mode === 'fail-permission-checks' && path === '/roles/check-permission');
    if (failing) {
      res
        .writeHead(this.failureStatus, { 'content-type': 'application/json' })
        .end(JSON.stringify({ statusCode: this.failureStatus, errorCode: 'UnhandledExceptionError', message: 'Internal server error' }));
      return;
    }
    if (this.delayMs > 0) {
      req.pause();
      setTimeout(() => this.forward(req, res, path, received.search), this.delayMs);
      return;
    }
    this.forward(req, res, path, received.search);
  }

  private forward(req: http.IncomingMessage, res: http.ServerResponse, path: string, search: string): void {
    const upstream = http.request(
      {
        host: this.target.hostname,
        port: this.target.port,
        method: req.method,
        path: `${path}${search}`,
        headers: { ...req.headers, host: this.target.host },
      },
      (answerStream) => {
        const hold = this.hold?.path === path ? this.hold : undefined;
        if (hold) {
          this.hold = undefined;
          const chunks: Buffer[] = [];
          answerStream.on('data', (chunk: Buffer) => chunks.push(chunk));
          answerStream.on('end', () => {
            hold.answered();
            void hold.released.then(() => res.writeHead(answerStream.statusCode ?? 502, answerStream.headers).end(Buffer.concat(chunks)));
          });
          return;
        }
        res.writeHead(answerStream.statusCode ?? 502, answerStream.headers);
        answerStream.pipe(res);
        if (path.endsWith('/events/stream')) {
          this.upstreamStreams.add(answerStream);
          // A stream cut (or its caller gone) ends the stream from the service too.
          res.on('close', () => {
            this.upstreamStreams.delete(answerStream);
            answerStream.destroy();
          });
        }
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('Bad gateway');
    });
    req.pipe(upstream);
  }
}

export { closedPort } from './ports';

// ---------------------------------------------------------------------------------------------
// Callers with chosen permissions, made through the service's API.

export interface UserWithRole extends SignedIn {
  roleSlug: string;
}

/** A role with these permissions and a signed-in user holding it. */
export async function createUserWithRole(t: TestApp, inst: Installation, name: string, permissions: string[]): Promise<UserWithRole> {
  const membershipId = inst.membership._id as string;
  const role = await t
    .http()
    .post(`/memberships/${membershipId}/roles`)
    .set('Authorization', inst.admin.auth)
    .send({ name: unique(name), permissions });
  if (role.status !== 201) throw new Error(`role create failed: ${role.status} ${JSON.stringify(role.body)}`);
  const username = unique(name).toLowerCase();
  const password = 'a long enough password';
  const user = await t
    .http()
    .post(`/memberships/${membershipId}/users`)
    .set('Authorization', inst.admin.auth)
    .send({ username, email_address: `${username}@example.com`, password, role: role.body.slug });
  if (user.status !== 201) throw new Error(`user create failed: ${user.status} ${JSON.stringify(user.body)}`);
  const signedIn = await signIn(t, membershipId, username, password);
  return { ...signedIn, userId: user.body._id as string, roleSlug: role.body.slug as string };
}

/** A scoped access token of `caller` (POST /generate-token with scopes). */
export async function scopedToken(t: TestApp, caller: SignedIn, scopes: string[]): Promise<string> {
  const res = await t.http().post('/generate-token').set('Authorization', caller.auth).send({ scopes });
  if (res.status !== 201) throw new Error(`scoped token failed: ${res.status} ${JSON.stringify(res.body)}`);
  return `Bearer ${res.body.access_token as string}`;
}

/** The service's own answer to GET /whoami for an Authorization header (its error body, for 401s). */
export async function serviceWhoami(t: TestApp, authorization?: string): Promise<{ status: number; body: unknown }> {
  const req = t.http().get('/whoami');
  const res = authorization === undefined ? await req : await req.set('Authorization', authorization);
  return { status: res.status, body: res.body as unknown };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
