/**
 * Acceptance tests of the client library (src/client) against the REAL service: a NestJS and an
 * Express third-party API, protected by the library, call the service over HTTP on 127.0.0.1
 * through a recording proxy (test/support/protected-apps.ts) that counts the calls and can
 * answer like a failing service. Callers get their permissions from roles made with the
 * service's own API.
 */
import type { PortcullisSettings } from '../../src/client';
import { startTestApp, type TestApp } from '../support/app';
import { type Installation, setupInstallation, type SignedIn, signIn } from '../support/api';
import {
  type ApiKind,
  closedPort,
  createUserWithRole,
  type ProtectedApi,
  scopedToken,
  serviceWhoami,
  ServiceProxy,
  sleep,
  startExampleApi,
  startTestApi,
  type UserWithRole,
} from '../support/protected-apps';

const KINDS: readonly ApiKind[] = ['nest', 'express'];

const ACCESS_DENIED = { statusCode: 403, errorCode: 'AccessDenied', message: expect.any(String) };
const UNAVAILABLE = { statusCode: 503, errorCode: 'AuthenticationServiceUnavailable', message: expect.any(String) };
/** supertest's own body check compares strictly; this one accepts jest matchers. */
const hasBody = (expected: unknown) => (res: { body: unknown }): void => {
  expect(res.body).toEqual(expected);
};
/** Values a placeholder must never let into an expression. */
const HOSTILE_VALUES = ['*', 'a.b', 'a b', '%00', '%2E', '%252E'] as const;

describe('client library: a third-party API protected by the real service', () => {
  let t: TestApp;
  let inst: Installation;
  let membershipId: string;
  let proxy: ServiceProxy;
  const apis = {} as Record<ApiKind, ProtectedApi>;
  /** Role: orders.read (every order), orders.delete.o-1, reports-eu.*, drafts.write. */
  let clerk: UserWithRole;
  /** Role: orders.read.o-1 only, audit.read. */
  let reader: UserWithRole;
  /** Role: the kept-as-written literals orders.read.%7BorderId%7D and admin.manage.%7Bsection%7D. */
  let lister: UserWithRole;
  /** Extra APIs and proxies a test starts; closed after all. */
  const extras: Array<{ close: () => Promise<void> }> = [];
  const savedRegion = process.env['REGION'];

  const settings = (overrides: Partial<PortcullisSettings> = {}): PortcullisSettings => ({
    BaseUrl: proxy.baseUrl,
    MembershipId: membershipId,
    ...overrides,
  });
  async function extraApi(kind: ApiKind, s: PortcullisSettings): Promise<ProtectedApi> {
    const api = await startTestApi(kind, s);
    extras.push(api);
    return api;
  }
  async function extraProxy(target: string, prefix?: string): Promise<ServiceProxy> {
    const p = await ServiceProxy.start(target, prefix);
    extras.push(p);
    return p;
  }

  beforeAll(async () => {
    process.env['REGION'] = 'eu';
    t = await startTestApp();
    inst = await setupInstallation(t);
    membershipId = inst.membership._id as string;
    proxy = await ServiceProxy.start(t.url);
    apis.nest = await startTestApi('nest', settings());
    apis.express = await startTestApi('express', settings());
    clerk = await createUserWithRole(t, inst, 'clerk', ['orders.read', 'orders.delete.o-1', 'reports-eu.*', 'drafts.write']);
    reader = await createUserWithRole(t, inst, 'reader', ['orders.read.o-1', 'audit.read']);
    lister = await createUserWithRole(t, inst, 'lister', ['orders.read.%7BorderId%7D', 'admin.manage.%7Bsection%7D']);
  });
  beforeEach(() => {
    proxy.reset();
    process.env['REGION'] = 'eu';
  });
  afterAll(async () => {
    if (savedRegion === undefined) delete process.env['REGION'];
    else process.env['REGION'] = savedRegion;
    for (const closable of [...extras, apis.nest, apis.express, proxy]) await closable?.close();
    await t?.close();
  });

  describe.each(KINDS)('%s API', (kind) => {
    const api = (): ProtectedApi => apis[kind];

    describe('endpoint modes', () => {
      it('unauthorized: public, whatever the Authorization header, without asking the service', async () => {
        await api().http().get('/public/ping').expect(200, { route: 'public.ping', caller: null, kind: null, permission: null });
        await api().http().get('/public/ping').set('Authorization', 'Bearer not-a-token').expect(200);
        await api().http().get('/docs').set('Authorization', 'Digest whatever').expect(200);
        expect(proxy.calls).toEqual([]);
      });

      it('no decorator: public, and its permission attributes do nothing', async () => {
        await api().http().get('/open/a.b').expect(200, {
          route: 'open.get',
          caller: null,
          kind: null,
          permission: null,
          params: { thingId: 'a.b' },
        });
        await api().http().get('/open/x').set('Authorization', 'Bearer not-a-token').expect(200);
        await api().http().get('/open/x').set('Authorization', clerk.auth).expect(200);
        expect(proxy.calls).toEqual([]);
      });

      it('self-authorized: a valid token is enough, the handler gets the verified caller, no permission check', async () => {
        const res = await api().http().get('/profile').set('Authorization', reader.auth);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ route: 'profile.me', caller: reader.userId, kind: 'Bearer', permission: null });
        await api().http().get('/profile').set('Authorization', inst.admin.auth).expect(200)
          .expect((r) => expect(r.body.caller).toBe(inst.admin.userId));
        expect(proxy.count('/whoami')).toBe(2);
        expect(proxy.count('/roles/check-permission')).toBe(0);
        // The caller's header is forwarded unchanged.
        expect(proxy.calls.map((c) => c.authorization)).toEqual([reader.auth, inst.admin.auth]);
        await api().http().get('/profile').expect(401);
      });

      it('authorized: allowed when the role grants the permission, 403 AccessDenied when it does not', async () => {
        const get = async (path: string, caller: SignedIn, method: 'get' | 'delete' = 'get') =>
          api().http()[method](path).set('Authorization', caller.auth);

        const allowed = await get('/orders/o-7', clerk);
        expect(allowed.status).toBe(200);
        expect(allowed.body).toEqual({
          route: 'orders.get',
          caller: clerk.userId,
          kind: 'Bearer',
          permission: `${clerk.userId}.orders.read.o-7`,
          params: { orderId: 'o-7' },
        });
        expect((await get('/orders/o-1', reader)).status).toBe(200);
        const denied = await get('/orders/o-2', reader);
        expect(denied.status).toBe(403);
        expect(denied.body).toEqual(ACCESS_DENIED);
        expect(denied.headers['www-authenticate']).toBeUndefined();
        expect((await get('/orders/o-1', clerk, 'delete')).status).toBe(200);
        expect((await get('/orders/o-2', clerk, 'delete')).body).toEqual(ACCESS_DENIED);
        // The admin role holds the service's own resources, not this API's.
        expect((await get('/orders/o-1', inst.admin)).status).toBe(403);

        expect(proxy.permissions).toEqual([
          `${clerk.userId}.orders.read.o-7`,
          `${reader.userId}.orders.read.o-1`,
          `${reader.userId}.orders.read.o-2`,
          `${clerk.userId}.orders.delete.o-1`,
          `${clerk.userId}.orders.delete.o-2`,
          `${inst.admin.userId}.orders.read.o-1`,
        ]);
        // Each check is made with the caller's own token.
        const checks = proxy.calls.filter((c) => c.path === '/roles/check-permission').map((c) => c.authorization);
        expect(checks).toEqual([clerk.auth, reader.auth, reader.auth, clerk.auth, clerk.auth, inst.admin.auth]);
      });

      it('authorized: a scoped token is limited by its scopes; the service own-record rule applies', async () => {
        const path = `/directory/${clerk.userId}`;
        const scoped = await scopedToken(t, inst.admin, ['users.read']);
        await api().http().get(path).set('Authorization', inst.admin.auth).expect(200);
        await api().http().delete(path).set('Authorization', inst.admin.auth).expect(200);
        await api().http().get(path).set('Authorization', scoped).expect(200);
        await api().http().delete(path).set('Authorization', scoped).expect(403).expect(hasBody(ACCESS_DENIED));
        // The clerk's role has no users permission; only its own record is readable (own_record).
        await api().http().get(`/directory/${reader.userId}`).set('Authorization', clerk.auth).expect(403).expect(hasBody(ACCESS_DENIED));
        await api().http().get(path).set('Authorization', clerk.auth).expect(200);
        expect(proxy.permissions).toEqual([
          `${inst.admin.userId}.users.read.${clerk.userId}`,
          `${inst.admin.userId}.users.delete.${clerk.userId}`,
          `${inst.admin.userId}.users.read.${clerk.userId}`,
          `${inst.admin.userId}.users.delete.${clerk.userId}`,
          `${clerk.userId}.users.read.${reader.userId}`,
          `${clerk.userId}.users.read.${clerk.userId}`,
        ]);
      });
    });

    describe('401 with the service error body', () => {
      it('missing token and unsupported schemes: 401 InvalidToken without a call', async () => {
        for (const path of ['/orders/o-1', '/profile']) {
          const missing = await api().http().get(path);
          expect(missing.status).toBe(401);
          expect(missing.body).toEqual({ statusCode: 401, errorCode: 'InvalidToken', message: expect.any(String) });
          expect(missing.headers['www-authenticate']).toMatch(/^Bearer realm="portcullis"/);
          expect((await serviceWhoami(t)).body).toMatchObject({ statusCode: 401, errorCode: 'InvalidToken' });
          for (const header of ['Digest username="x"', 'Token abc', 'Negotiate abc']) {
            const unsupported = await api().http().get(path).set('Authorization', header);
            expect(unsupported.status).toBe(401);
            expect(unsupported.body).toEqual({ statusCode: 401, errorCode: 'InvalidToken', message: expect.any(String) });
            expect((await serviceWhoami(t, header)).body).toMatchObject({ statusCode: 401, errorCode: 'InvalidToken' });
          }
        }
        expect(proxy.calls).toEqual([]);
      });

      it('invalid tokens: the service own code and message, passed on exactly', async () => {
        const tampered = `${clerk.accessToken.slice(0, -2)}${clerk.accessToken.endsWith('AA') ? 'BB' : 'AA'}`;
        const headers = [
          'Bearer not-a-jwt',
          `Bearer ${tampered}`,
          `Bearer ${clerk.refreshToken}`, // a refresh token used as an access token
          `Basic ${inst.application.id}:wrong-secret`,
          'Basic unknown-application:some-secret',
        ];
        for (const header of headers) {
          const expected = await serviceWhoami(t, header);
          expect(expected).toEqual({ status: 401, body: { statusCode: 401, errorCode: 'InvalidToken', message: expect.any(String) } });
          for (const path of ['/orders/o-1', '/profile']) {
            const res = await api().http().get(path).set('Authorization', header);
            expect({ header, status: res.status, body: res.body as unknown }).toEqual({ header, status: 401, body: expected.body });
            expect(res.headers['www-authenticate']).toBe(
              header.startsWith('Basic') ? 'Basic realm="portcullis"' : 'Bearer realm="portcullis", error="invalid_token"',
            );
          }
        }
        expect(proxy.count('/roles/check-permission')).toBe(0);
      });

      it('a revoked token: allowed before GET /revoke-token, the service 401 after', async () => {
        const session = await signIn(t, membershipId, reader.username, reader.password);
        await api().http().get('/orders/o-1').set('Authorization', session.auth).expect(200);
        await t.http().get('/revoke-token').set('Authorization', session.auth).expect(204);
        const expected = await serviceWhoami(t, session.auth);
        expect(expected).toEqual({ status: 401, body: { statusCode: 401, errorCode: 'TokenWasRevoked', message: expect.any(String) } });
        for (const path of ['/orders/o-1', '/profile']) {
          const res = await api().http().get(path).set('Authorization', session.auth);
          expect(res.status).toBe(401);
          expect(res.body).toEqual(expected.body);
        }
        // The reader's other session is untouched.
        await api().http().get('/orders/o-1').set('Authorization', reader.auth).expect(200);
      });

      it('a frozen user: its tokens stop working at once (Bearer answers are never cached)', async () => {
        const frozen = await createUserWithRole(t, inst, 'frozen', ['orders.read']);
        await api().http().get('/orders/o-1').set('Authorization', frozen.auth).expect(200);
        await t.http().post(`/memberships/${membershipId}/users/${frozen.userId}/freeze`).set('Authorization', inst.admin.auth)
          .expect((r) => expect(r.status).toBeLessThan(300));
        const expected = await serviceWhoami(t, frozen.auth);
        expect(expected.status).toBe(401);
        const res = await api().http().get('/orders/o-1').set('Authorization', frozen.auth);
        expect(res.status).toBe(401);
        expect(res.body).toEqual(expected.body);
      });

      it('a valid token of another membership than the API: 401 InvalidToken', async () => {
        const other = await extraApi(kind, settings({ MembershipId: 'another-membership' }));
        for (const header of [clerk.auth, inst.application.basic]) {
          const res = await other.http().get('/profile').set('Authorization', header);
          expect(res.status).toBe(401);
          expect(res.body).toEqual({ statusCode: 401, errorCode: 'InvalidToken', message: expect.any(String) });
        }
      });
    });

    describe('Basic tokens', () => {
      it('an application: allowed with the permission, 403 without, verified on every request when there is no cache', async () => {
        const app = inst.application;
        const path = `/directory/${clerk.userId}`;
        for (let i = 0; i < 2; i += 1) {
          const res = await api().http().get(path).set('Authorization', app.basic);
          expect(res.status).toBe(200);
          expect(res.body).toEqual({
            route: 'directory.get',
            caller: app.id,
            kind: 'Basic',
            permission: `${app.id}.users.read.${clerk.userId}`,
            params: { userId: clerk.userId },
          });
        }
        // The standard base64 form of Basic is forwarded unchanged and accepted by the service too.
        const base64 = `Basic ${Buffer.from(`${app.id}:${app.secret}`).toString('base64')}`;
        await api().http().get(path).set('Authorization', base64).expect(200)
          .expect((r) => expect(r.body).toMatchObject({ caller: app.id, kind: 'Basic' }));
        await api().http().get('/orders/o-1').set('Authorization', app.basic).expect(403).expect(hasBody(ACCESS_DENIED));
        await api().http().get('/profile').set('Authorization', app.basic).expect(200)
          .expect((r) => expect(r.body).toMatchObject({ caller: app.id, kind: 'Basic' }));
        expect(proxy.count('/whoami')).toBe(5);
        expect(proxy.count('/roles/check-permission')).toBe(4);
      });
    });

    describe('placeholders', () => {
      it('resolve from route, query, header and env', async () => {
        const res = await api().http().get('/reports').query({ kind: 'monthly' }).set('X-Tenant', 'acme').set('Authorization', clerk.auth);
        expect(res.status).toBe(200);
        expect(res.body.permission).toBe(`${clerk.userId}.reports-eu.monthly.acme`);
        process.env['REGION'] = 'us';
        await api().http().get('/reports').query({ kind: 'monthly' }).set('X-Tenant', 'acme').set('Authorization', clerk.auth).expect(403);
        expect(proxy.permissions).toEqual([`${clerk.userId}.reports-eu.monthly.acme`, `${clerk.userId}.reports-us.monthly.acme`]);
      });

      it.each(HOSTILE_VALUES)('hostile value %j in a route, query, header or env placeholder: 403 without a permission call', async (value) => {
        const requests = [
          () => api().http().get(`/orders/${encodeURIComponent(value)}`),
          () => api().http().get('/reports').query({ kind: value }).set('X-Tenant', 'acme'),
          () => api().http().get('/reports').query({ kind: 'monthly' }).set('X-Tenant', value),
          () => {
            process.env['REGION'] = value;
            return api().http().get('/reports').query({ kind: 'monthly' }).set('X-Tenant', 'acme');
          },
        ];
        for (const [index, send] of requests.entries()) {
          // The clerk holds orders.read and reports-eu.*: only the library can refuse these.
          const res = await send().set('Authorization', clerk.auth);
          expect({ index, status: res.status, body: res.body as unknown }).toEqual({ index, status: 403, body: ACCESS_DENIED });
          process.env['REGION'] = 'eu';
        }
        // Authenticated first, never asked about the permission.
        expect(proxy.count('/whoami')).toBe(requests.length);
        expect(proxy.permissions).toEqual([]);
      });

      it('a value the service refuses to evaluate (an expression over its length limit) is a 403, not a 503', async () => {
        const long = 'a'.repeat(600);
        const direct = await t.http().get('/roles/check-permission').query({ permission: `${clerk.userId}.orders.read.${long}` })
          .set('Authorization', clerk.auth);
        expect(direct.status).toBe(400);
        expect(direct.body.errorCode).toBe('InvalidPermission');
        await api().http().get(`/orders/${long}`).set('Authorization', clerk.auth).expect(403).expect(hasBody(ACCESS_DENIED));
        expect(proxy.permissions).toEqual([`${clerk.userId}.orders.read.${long}`]);
      });

      it('an unresolvable query, header or env placeholder denies; an invalid token still gets 401 first', async () => {
        const reports = () => api().http().get('/reports').set('Authorization', clerk.auth);
        await reports().set('X-Tenant', 'acme').expect(403).expect(hasBody(ACCESS_DENIED)); // no kind
        await reports().query('kind=').set('X-Tenant', 'acme').expect(403).expect(hasBody(ACCESS_DENIED)); // empty kind
        await reports().query('kind=a&kind=b').set('X-Tenant', 'acme').expect(403).expect(hasBody(ACCESS_DENIED)); // repeated
        await reports().query('kind[x]=monthly').set('X-Tenant', 'acme').expect(403).expect(hasBody(ACCESS_DENIED)); // not a string
        await reports().query({ kind: 'monthly' }).expect(403).expect(hasBody(ACCESS_DENIED)); // no header
        delete process.env['REGION'];
        const noEnv = await reports().query({ kind: 'monthly' }).set('X-Tenant', 'acme'); // no env
        expect(noEnv.status).toBe(403);
        expect(noEnv.body).toEqual(ACCESS_DENIED);
        // The API's environment is its own business: the caller is not told the variable's name.
        expect(noEnv.body.message).not.toContain('REGION');
        expect(proxy.count('/whoami')).toBe(6);
        expect(proxy.permissions).toEqual([]);

        const invalid = await api().http().get('/reports').set('Authorization', 'Bearer not-a-jwt');
        expect(invalid.status).toBe(401);
        expect(invalid.body).toEqual((await serviceWhoami(t, 'Bearer not-a-jwt')).body);
      });

      it('a route placeholder without a value is kept as written', async () => {
        const list = (caller: SignedIn) => api().http().get('/orders').set('Authorization', caller.auth);
        const wildcard = await list(clerk);
        expect(wildcard.status).toBe(200);
        expect(wildcard.body.permission).toBe(`${clerk.userId}.orders.read.%7BorderId%7D`);
        await list(reader).expect(403).expect(hasBody(ACCESS_DENIED));
        await list(lister).expect(200);
        expect(proxy.permissions).toEqual([
          `${clerk.userId}.orders.read.%7BorderId%7D`,
          `${reader.userId}.orders.read.%7BorderId%7D`,
          `${lister.userId}.orders.read.%7BorderId%7D`,
        ]);
        // The literal names only the list route, not an order.
        await api().http().get('/orders/o-1').set('Authorization', lister.auth).expect(403);
      });
    });

    it('precedence: the handler mode wins over the controller, permission segments merge', async () => {
      // Controller authorized, handler unauthorized.
      await api().http().get('/orders/public/summary').expect(200).expect((r) => expect(r.body.route).toBe('orders.summary'));
      expect(proxy.calls).toEqual([]);
      // Controller authorized, handler self-authorized: the reader lacks orders.read.o-9.
      await api().http().get('/orders/o-9/notes').expect(401);
      await api().http().get('/orders/o-9/notes').set('Authorization', reader.auth).expect(200)
        .expect((r) => expect(r.body).toMatchObject({ route: 'orders.notes', caller: reader.userId, permission: null }));
      expect(proxy.permissions).toEqual([]);
      // Handler action with the controller's object.
      await api().http().delete('/orders/o-2').set('Authorization', reader.auth).expect(403);
      // Controller self-authorized, handler authorized.
      await api().http().get('/profile/audit').set('Authorization', reader.auth).expect(200);
      await api().http().get('/profile/audit').set('Authorization', clerk.auth).expect(403).expect(hasBody(ACCESS_DENIED));
      // Controller unauthorized, handler authorized.
      await api().http().get('/docs/drafts').expect(401);
      await api().http().get('/docs/drafts').set('Authorization', clerk.auth).expect(200);
      await api().http().get('/docs/drafts').set('Authorization', reader.auth).expect(403);
      expect(proxy.permissions).toEqual([
        `${reader.userId}.orders.delete.o-2`,
        `${reader.userId}.audit.read.*`,
        `${clerk.userId}.audit.read.*`,
        `${clerk.userId}.drafts.write.*`,
        `${reader.userId}.drafts.write.*`,
      ]);
    });

    it('concurrent identical requests share one call to the service', async () => {
      // Long enough for all five to reach the library while the first lookups are pending.
      proxy.delayMs = 400;
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => api().http().get('/orders/o-3').set('Authorization', clerk.auth)),
      );
      proxy.delayMs = 0;
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect([proxy.count('/whoami'), proxy.count('/roles/check-permission')]).toEqual([1, 1]);
      // Settled calls are forgotten: the next request asks again.
      await api().http().get('/orders/o-3').set('Authorization', clerk.auth).expect(200);
      expect([proxy.count('/whoami'), proxy.count('/roles/check-permission')]).toEqual([2, 2]);
    });

    it('503 when the service does not answer within TimeoutMs', async () => {
      const impatient = await extraApi(kind, settings({ TimeoutMs: 300 }));
      proxy.mode = 'hang';
      const started = Date.now();
      const res = await impatient.http().get('/orders/o-1').set('Authorization', clerk.auth);
      expect(res.status).toBe(503);
      expect(res.body).toEqual(UNAVAILABLE);
      expect(res.headers['retry-after']).toBe('1');
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('503 AuthenticationServiceUnavailable, never 401, when the service answers 500', async () => {
      proxy.mode = 'fail';
      for (const header of [clerk.auth, 'Bearer not-a-jwt', inst.application.basic]) {
        for (const path of ['/orders/o-1', '/profile']) {
          const res = await api().http().get(path).set('Authorization', header);
          expect({ header, path, status: res.status, body: res.body as unknown }).toEqual({ header, path, status: 503, body: UNAVAILABLE });
          expect(res.headers['retry-after']).toBe('1');
        }
      }
      await api().http().get('/public/ping').expect(200);
      // /whoami answers, the permission check fails.
      proxy.mode = 'fail-permission-checks';
      await api().http().get('/orders/o-1').set('Authorization', clerk.auth).expect(503).expect(hasBody(UNAVAILABLE));
      await api().http().get('/profile').set('Authorization', clerk.auth).expect(200);
      proxy.failureStatus = 502;
      await api().http().get('/orders/o-1').set('Authorization', clerk.auth).expect(503).expect(hasBody(UNAVAILABLE));
      proxy.mode = 'forward';
      await api().http().get('/orders/o-1').set('Authorization', clerk.auth).expect(200);
    });
  });

  it('precedence, Express: middleware mounted before routing keeps the route placeholder as written', async () => {
    await apis.express.http().get('/admin/reports').set('Authorization', lister.auth).expect(200)
      .expect((r) => expect(r.body.permission).toBe(`${lister.userId}.admin.manage.%7Bsection%7D`));
    await apis.express.http().get('/admin/reports').set('Authorization', clerk.auth).expect(403).expect(hasBody(ACCESS_DENIED));
    await apis.express.http().get('/admin/reports').expect(401);
  });

  it('BaseUrl with a path prefix: calls go to <prefix>/whoami and <prefix>/roles/check-permission', async () => {
    const prefixed = await extraProxy(t.url, '/auth/');
    for (const baseUrl of [prefixed.baseUrl, prefixed.baseUrl.replace(/\/$/, '')]) {
      for (const kind of KINDS) {
        prefixed.calls.length = 0;
        const api = await extraApi(kind, settings({ BaseUrl: baseUrl }));
        await api.http().get('/orders/o-1').set('Authorization', clerk.auth).expect(200);
        await api.http().get('/orders/o-2').set('Authorization', reader.auth).expect(403).expect(hasBody(ACCESS_DENIED));
        const invalid = await api.http().get('/profile').set('Authorization', 'Bearer not-a-jwt');
        expect(invalid.status).toBe(401);
        expect(invalid.body).toEqual((await serviceWhoami(t, 'Bearer not-a-jwt')).body);
        expect(prefixed.calls.map((c) => c.receivedPath)).toEqual([
          '/auth/whoami',
          '/auth/roles/check-permission',
          '/auth/whoami',
          '/auth/roles/check-permission',
          '/auth/whoami',
        ]);
      }
    }
    // The proxy serves nothing outside the prefix: a client without it gets 503, not an answer.
    const unprefixed = await extraApi('express', settings({ BaseUrl: prefixed.baseUrl.replace(/auth\/$/, '') }));
    await unprefixed.http().get('/orders/o-1').set('Authorization', clerk.auth).expect(503).expect(hasBody(UNAVAILABLE));
  });

  it('Basic token cache: a hit within the TTL skips the service; Bearer is never cached', async () => {
    const counting = await extraProxy(t.url);
    const ttlSeconds = 2;
    const cached = await Promise.all(KINDS.map((kind) => extraApi(kind, settings({ BaseUrl: counting.baseUrl, BasicTokenCacheTTL: ttlSeconds }))));
    const path = `/directory/${clerk.userId}`;
    const basic = inst.application.basic;
    const firstAt = Date.now();
    for (const api of cached) await api.http().get(path).set('Authorization', basic).expect(200);
    expect([counting.count('/whoami'), counting.count('/roles/check-permission')]).toEqual([2, 2]);
    for (const api of cached) {
      await api.http().get(path).set('Authorization', basic).expect(200);
      await api.http().get('/profile').set('Authorization', basic).expect(200);
    }
    expect([counting.count('/whoami'), counting.count('/roles/check-permission')]).toEqual([2, 2]);
    // Bearer tokens: every request goes to the service.
    for (const api of cached) {
      await api.http().get(path).set('Authorization', inst.admin.auth).expect(200);
      await api.http().get(path).set('Authorization', inst.admin.auth).expect(200);
    }
    expect([counting.count('/whoami'), counting.count('/roles/check-permission')]).toEqual([6, 6]);
    // After the TTL the application is verified again.
    await sleep(firstAt + ttlSeconds * 1000 + 100 - Date.now());
    for (const api of cached) await api.http().get(path).set('Authorization', basic).expect(200);
    expect([counting.count('/whoami'), counting.count('/roles/check-permission')]).toEqual([8, 8]);
  });

  it('Basic token cache: a rotated secret keeps working until the TTL ends, then gets 401', async () => {
    const counting = await extraProxy(t.url);
    const ttlSeconds = 2;
    const cached = await Promise.all(KINDS.map((kind) => extraApi(kind, settings({ BaseUrl: counting.baseUrl, BasicTokenCacheTTL: ttlSeconds }))));
    const created = await t.http().post(`/memberships/${membershipId}/applications`).set('Authorization', inst.admin.auth)
      .send({ name: 'rotating-app', role: 'admin' });
    expect(created.status).toBe(201);
    const appId = created.body._id as string;
    const oldBasic = `Basic ${appId}:${created.body.secret as string}`;
    const path = `/directory/${clerk.userId}`;

    const warmedAt = Date.now();
    for (const api of cached) await api.http().get(path).set('Authorization', oldBasic).expect(200);
    const rotated = await t.http().post(`/memberships/${membershipId}/applications/${appId}/secret`).set('Authorization', inst.admin.auth);
    expect(rotated.status).toBe(200);
    const newBasic = `Basic ${appId}:${rotated.body.secret as string}`;
    expect(newBasic).not.toBe(oldBasic);
    const rejected = await serviceWhoami(t, oldBasic);
    expect(rejected.status).toBe(401);

    // Within the TTL: still accepted from the cache, without the service; without a cache: refused at once.
    const callsBefore = counting.calls.length;
    for (const api of cached) await api.http().get(path).set('Authorization', oldBasic).expect(200);
    expect(counting.calls.length).toBe(callsBefore);
    for (const kind of KINDS) {
      const res = await apis[kind].http().get(path).set('Authorization', oldBasic);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(rejected.body);
    }
    for (const api of cached) await api.http().get(path).set('Authorization', newBasic).expect(200);

    // After the TTL: the service's 401.
    await sleep(warmedAt + ttlSeconds * 1000 + 100 - Date.now());
    for (const api of cached) {
      const res = await api.http().get(path).set('Authorization', oldBasic);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(rejected.body);
      expect(res.headers['www-authenticate']).toBe('Basic realm="portcullis"');
      await api.http().get(path).set('Authorization', newBasic).expect(200);
    }
  });

  it('503 when the service cannot be reached at all (closed port)', async () => {
    const port = await closedPort();
    for (const kind of KINDS) {
      const api = await extraApi(kind, settings({ BaseUrl: `http://127.0.0.1:${port}/`, TimeoutMs: 2000 }));
      for (const header of [clerk.auth, 'Bearer not-a-jwt', inst.application.basic]) {
        for (const path of ['/orders/o-1', '/profile']) {
          const res = await api.http().get(path).set('Authorization', header);
          expect({ kind, header, path, status: res.status, body: res.body as unknown }).toEqual({ kind, header, path, status: 503, body: UNAVAILABLE });
          expect(res.headers['retry-after']).toBe('1');
        }
      }
      await api.http().get('/public/ping').expect(200);
      await api.http().get('/orders/o-1').expect(401); // no token: no call needed
    }
  });

  it('the example apps (examples/protected-api) work against the real service', async () => {
    for (const kind of KINDS) {
      proxy.reset();
      const api = await startExampleApi(kind, settings());
      extras.push(api);
      await api.http().get('/health').expect(200, { status: 'ok' });
      await api.http().get('/orders').expect(401);
      await api.http().get('/orders').set('Authorization', clerk.auth).expect(200);
      await api.http().get('/orders/o-1').set('Authorization', reader.auth).expect(200, { id: 'o-1', readBy: reader.userId });
      await api.http().get('/orders/o-2').set('Authorization', reader.auth).expect(403).expect(hasBody(ACCESS_DENIED));
      await api.http().delete('/orders/o-1').set('Authorization', clerk.auth).expect(204);
      await api.http().delete('/orders/o-2').set('Authorization', clerk.auth).expect(403);
      await api.http().get('/reports?kind=monthly').set('X-Tenant', 'acme').set('Authorization', clerk.auth).expect(200);
      await api.http().get('/reports?kind=monthly').set('X-Tenant', 'a.b').set('Authorization', clerk.auth).expect(403);
      await api.http().get('/profile').set('Authorization', inst.application.basic)
        .expect(200, { id: inst.application.id, kind: 'Basic', role: 'admin' });
      await api.http().get('/orders').set('Authorization', 'Bearer not-a-jwt').expect(401);
      expect(proxy.permissions).toEqual([
        `${clerk.userId}.orders.read.*`,
        `${reader.userId}.orders.read.o-1`,
        `${reader.userId}.orders.read.o-2`,
        `${clerk.userId}.orders.delete.o-1`,
        `${clerk.userId}.orders.delete.o-2`,
        `${clerk.userId}.reports-eu.monthly.acme`,
      ]);
    }
  });

  describe('a membership whose access tokens live 1 second, on its own service', () => {
    let short: TestApp;
    let shortInst: Installation;
    let signedInAt: number;
    const shortApis = {} as Record<ApiKind, ProtectedApi>;

    beforeAll(async () => {
      short = await startTestApp();
      shortInst = await setupInstallation(short, { expires_in: 1 });
      signedInAt = Date.now();
      for (const kind of KINDS) {
        shortApis[kind] = await startTestApi(kind, { BaseUrl: `${short.url}/`, MembershipId: shortInst.membership._id as string });
      }
    });
    afterAll(async () => {
      for (const kind of KINDS) await shortApis[kind]?.close();
      await short?.close();
    });

    it('an expired token: 401 with the service own body', async () => {
      await sleep(signedInAt + 1200 - Date.now());
      const expected = await serviceWhoami(short, shortInst.admin.auth);
      expect(expected.status).toBe(401);
      expect(expected.body).toMatchObject({ errorCode: 'TokenWasExpired' });
      for (const kind of KINDS) {
        for (const path of ['/profile', `/directory/${shortInst.admin.userId}`]) {
          const res = await shortApis[kind].http().get(path).set('Authorization', shortInst.admin.auth);
          expect(res.status).toBe(401);
          expect(res.body).toEqual(expected.body);
          expect(res.headers['www-authenticate']).toBe('Bearer realm="portcullis", error="invalid_token"');
        }
      }
    });

    it('503 once the service is stopped, for valid and invalid credentials alike', async () => {
      for (const kind of KINDS) {
        await shortApis[kind].http().get(`/directory/${shortInst.admin.userId}`).set('Authorization', shortInst.application.basic).expect(200);
      }
      await short.close();
      for (const kind of KINDS) {
        for (const header of [shortInst.application.basic, shortInst.admin.auth, 'Bearer not-a-jwt']) {
          const res = await shortApis[kind].http().get('/profile').set('Authorization', header);
          expect({ kind, header, status: res.status, body: res.body as unknown }).toEqual({ kind, header, status: 503, body: UNAVAILABLE });
          expect(res.headers['retry-after']).toBe('1');
        }
        await shortApis[kind].http().get('/public/ping').expect(200);
      }
    });
  });
});
