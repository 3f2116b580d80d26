/**
 * A stand-in for the identity service on 127.0.0.1 (node:http, port 0), for the client library's
 * unit tests only: it answers /whoami and /roles/check-permission as the contract says, counts
 * calls, and can be told to fail (5xx, hang, unreadable answers). Not part of the public API.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closedPort } from './ports';

export interface FakeIdentity {
  _id: string;
  membership_id: string;
  [field: string]: unknown;
}

export interface FakeCall {
  path: 'whoami' | 'check-permission' | 'other';
  authorization: string | undefined;
  permission?: string | undefined;
}

/** How an endpoint of the fake answers: as the service would, or one of the failure modes. */
export type Behaviour =
  | 'normal'
  | 'error500'
  | 'error502'
  | 'hang'
  | 'garbage200'
  | 'html401'
  | 'notFound'
  | 'redirect'
  | 'wrongShape200'
  /** 401 TokenWasExpired with the service's error body. */
  | 'expired401'
  /** 400 InvalidPermission, as the service answers an expression it will not evaluate. */
  | 'invalidPermission400';

const SEGMENT = /^(\*|[A-Za-z0-9_:%-]+)$/;

export class FakeService {
  readonly calls: FakeCall[] = [];
  /** Valid Authorization headers and whom they identify. */
  readonly identities = new Map<string, FakeIdentity>();
  /** Answers for headers that are not valid (default InvalidToken). */
  readonly rejections = new Map<string, { errorCode: string; message: string }>();
  /** Expressions each header is allowed (exact match, after validation). */
  readonly grants = new Map<string, Set<string>>();
  whoami: Behaviour = 'normal';
  checkPermission: Behaviour = 'normal';
  /** Delay before each answer, to let concurrent requests pile up. */
  delayMs = 0;

  private constructor(
    private readonly server: http.Server,
    readonly baseUrl: string,
  ) {}

  static async start(prefix = '/'): Promise<FakeService> {
    const holder: { service?: FakeService } = {};
    const server = http.createServer((req, res) => holder.service?.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    holder.service = new FakeService(server, `http://127.0.0.1:${port}${prefix}`);
    return holder.service;
  }

  /** A header that authenticates as `identity` and is allowed `permissions`. */
  accept(authorization: string, identity: FakeIdentity, permissions: string[] = []): void {
    this.identities.set(authorization, identity);
    this.grants.set(authorization, new Set(permissions));
  }

  revoke(authorization: string, errorCode = 'InvalidToken', message = 'The token is invalid.'): void {
    this.identities.delete(authorization);
    this.rejections.set(authorization, { errorCode, message });
  }

  count(path: FakeCall['path']): number {
    return this.calls.filter((c) => c.path === path).length;
  }

  reset(): void {
    this.calls.length = 0;
    this.identities.clear();
    this.rejections.clear();
    this.grants.clear();
    this.whoami = 'normal';
    this.checkPermission = 'normal';
    this.delayMs = 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const prefix = new URL(this.baseUrl).pathname;
    const route = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : url.pathname;
    const path: FakeCall['path'] =
      route === 'whoami' ? 'whoami' : route === 'roles/check-permission' ? 'check-permission' : 'other';
    const permission = url.searchParams.get('permission') ?? undefined;
    this.calls.push({ path, authorization: req.headers.authorization, permission });
    const answer = (): void => {
      if (path === 'whoami') this.answerWhoami(req, res);
      else if (path === 'check-permission') this.answerCheck(req, res, permission);
      else send(res, 404, { statusCode: 404, errorCode: 'NotFound', message: 'Not found' });
    };
    if (this.delayMs > 0) setTimeout(answer, this.delayMs);
    else answer();
  }

  /** Sends the failure of `behaviour`, or returns false for 'normal'. */
  private misbehave(behaviour: Behaviour, res: http.ServerResponse): boolean {
    switch (behaviour) {
      case 'normal':
        return false;
      case 'error500':
        send(res, 500, { statusCode: 500, errorCode: 'UnhandledExceptionError', message: 'Unexpected error' });
        return true;
      case 'error502':
        res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
        return true;
      case 'hang':
        return true;
      case 'garbage200':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"_id": ');
        return true;
      case 'html401':
        res.writeHead(401, { 'content-type': 'text/html' }).end('<h1>Proxy login</h1>');
        return true;
      case 'notFound':
        send(res, 404, { statusCode: 404, errorCode: 'NotFound', message: 'Not found' });
        return true;
      case 'redirect':
        res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end();
        return true;
      case 'wrongShape200':
        send(res, 200, { hello: 'world' });
        return true;
      case 'expired401':
        res.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"');
        send(res, 401, { statusCode: 401, errorCode: 'TokenWasExpired', message: 'The token expired.' });
        return true;
      case 'invalidPermission400':
        send(res, 400, { statusCode: 400, errorCode: 'InvalidPermission', message: 'invalid permission' });
        return true;
    }
  }

  private reject(authorization: string | undefined, res: http.ServerResponse): void {
    const rejection = (authorization === undefined ? undefined : this.rejections.get(authorization)) ??
      { errorCode: 'InvalidToken', message: 'The token is invalid.' };
    res.setHeader('WWW-Authenticate', 'Bearer error="invalid_token"');
    send(res, 401, { statusCode: 401, ...rejection });
  }

  private answerWhoami(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.misbehave(this.whoami, res)) return;
    const authorization = req.headers.authorization;
    const identity = authorization === undefined ? undefined : this.identities.get(authorization);
    if (identity === undefined) return this.reject(authorization, res);
    send(res, 200, identity);
  }

  private answerCheck(req: http.IncomingMessage, res: http.ServerResponse, permission: string | undefined): void {
    if (this.misbehave(this.checkPermission, res)) return;
    const authorization = req.headers.authorization;
    if (authorization === undefined || !this.identities.has(authorization)) return this.reject(authorization, res);
    if (permission === undefined || permission === '') {
      return send(res, 400, { statusCode: 400, errorCode: 'PermissionRequired', message: 'permission is required' });
    }
    const segments = permission.split('.');
    if (segments.length > 4 || !segments.every((s) => SEGMENT.test(s))) {
      return send(res, 400, { statusCode: 400, errorCode: 'InvalidPermission', message: 'invalid permission' });
    }
    const allowed = this.grants.get(authorization)?.has(permission) ?? false;
    send(res, 200, { allowed, permission, reason: allowed ? 'role_permission' : 'no_permission' });
  }
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A base URL on 127.0.0.1 on which nothing listens (see closedPort). */
export async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}/`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
