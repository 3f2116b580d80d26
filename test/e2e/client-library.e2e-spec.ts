/**
 * Acceptance tests of the client library (@portcullis/client, packages/client) against the REAL service: a NestJS and an
 * Express third-party API, protected by the library, call the service over HTTP on 127.0.0.1
 * through a recording proxy (test/support/protected-apps.ts) that counts the calls and can
 * answer like a failing service. Callers get their permissions from roles made with the
 * service's own API.
 */
import { eventually, settles, type SignedIn, signIn } from '../support/api';
import { ACCESS_DENIED, hasBody, KINDS, UNAVAILABLE, useClientLibrarySuite } from '../support/client-library-suite';
import { createUserWithRole, type ProtectedApi, scopedToken, serviceWhoami } from '../support/protected-apps';

/** Values a placeholder must never let into an expression. */
const HOSTILE_VALUES = ['*', 'a.b', 'a b', '%00', '%2E', '%252E'] as const;

/** The client library, per protected API (NestJS and Express): endpoint modes, permission expressions and placeholders, failures of the service. (Split by behaviour; see also client-library-service.e2e-spec.ts.) */
describe('client library: a third-party API protected by the real service', () => {
  const suite = useClientLibrarySuite();
  const { apis, settings, extraApi } = suite;

  describe.each(KINDS)('%s API', (kind) => {
    const api = (): ProtectedApi => apis[kind];

    describe('endpoint modes', () => {
      it('unauthorized: public, whatever the Authorization header, without asking the service', async () => {
        await api().http().get('/public/ping').expect(200, { route: 'public.ping', caller: null, kind: null, permission: null });
        await api().http().get('/public/ping').set('Authorization', 'Bearer not-a-token').expect(200);
        await api().http().get('/docs').set('Authorization', 'Digest whatever').expect(200);
        expect(suite.proxy.calls).toEqual([]);
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
        await api().http().get('/open/x').set('Authorization', suite.clerk.auth).expect(200);
        expect(suite.proxy.calls).toEqual([]);
      });

      it('self-authorized: a valid token is enough, the handler gets the verified caller, no permission check', async () => {
        const res = await api().http().get('/profile').set('Authorization', suite.reader.auth);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ route: 'profile.me', caller: suite.reader.userId, kind: 'Bearer', permission: null });
        await api().http().get('/profile').set('Authorization', suite.inst.admin.auth).expect(200)
          .expect((r) => expect(r.body.caller).toBe(suite.inst.admin.userId));
        expect(suite.proxy.count('/whoami')).toBe(2);
        expect(suite.proxy.count('/roles/check-permission')).toBe(0);
        // The caller's header is forwarded unchanged.
        expect(suite.proxy.calls.map((c) => c.authorization)).toEqual([suite.reader.auth, suite.inst.admin.auth]);
        await api().http().get('/profile').expect(401);
      });

      it('authorized: allowed when the role grants the permission, 403 AccessDenied when it does not', async () => {
        const get = async (path: string, caller: SignedIn, method: 'get' | 'delete' = 'get') =>
          api().http()[method](path).set('Authorization', caller.auth);

        const allowed = await get('/orders/o-7', suite.clerk);
        expect(allowed.status).toBe(200);
        expect(allowed.body).toEqual({
          route: 'orders.get',
          caller: suite.clerk.userId,
          kind: 'Bearer',
          permission: `${suite.clerk.userId}.orders.read.o-7`,
          params: { orderId: 'o-7' },
        });
        expect((await get('/orders/o-1', suite.reader)).status).toBe(200);
        const denied = await get('/orders/o-2', suite.reader);
        expect(denied.status).toBe(403);
        expect(denied.body).toEqual(ACCESS_DENIED);
        expect(denied.headers['www-authenticate']).toBeUndefined();
        expect((await get('/orders/o-1', suite.clerk, 'delete')).status).toBe(200);
        expect((await get('/orders/o-2', suite.clerk, 'delete')).body).toEqual(ACCESS_DENIED);
        // The admin role holds the service's own resources, not this API's.
        expect((await get('/orders/o-1', suite.inst.admin)).status).toBe(403);

        expect(suite.proxy.permissions).toEqual([
          `${suite.clerk.userId}.orders.read.o-7`,
          `${suite.reader.userId}.orders.read.o-1`,
          `${suite.reader.userId}.orders.read.o-2`,
          `${suite.clerk.userId}.orders.delete.o-1`,
          `${suite.clerk.userId}.orders.delete.o-2`,
          `${suite.inst.admin.userId}.orders.read.o-1`,
        ]);
        // Each check is made with the caller's own token.
        const checks = suite.proxy.calls.filter((c) => c.path === '/roles/check-permission').map((c) => c.authorization);
        expect(checks).toEqual([suite.clerk.auth, suite.reader.auth, suite.reader.auth, suite.clerk.auth, suite.clerk.auth, suite.inst.admin.auth]);
      });

      it('authorized: a scoped token is limited by its scopes; the service own-record rule applies', async () => {
        const path = `/directory/${suite.clerk.userId}`;
        const scoped = await scopedToken(suite.t, suite.inst.admin, ['users.read']);
        await api().http().get(path).set('Authorization', suite.inst.admin.auth).expect(200);
        await api().http().delete(path).set('Authorization', suite.inst.admin.auth).expect(200);
        await api().http().get(path).set('Authorization', scoped).expect(200);
        await api().http().delete(path).set('Authorization', scoped).expect(403).expect(hasBody(ACCESS_DENIED));
        // The clerk's role has no users permission; only its own record is readable (own_record).
        await api().http().get(`/directory/${suite.reader.userId}`).set('Authorization', suite.clerk.auth).expect(403).expect(hasBody(ACCESS_DENIED));
        await api().http().get(path).set('Authorization', suite.clerk.auth).expect(200);
        expect(suite.proxy.permissions).toEqual([
          `${suite.inst.admin.userId}.users.read.${suite.clerk.userId}`,
          `${suite.inst.admin.userId}.users.delete.${suite.clerk.userId}`,
          `${suite.inst.admin.userId}.users.read.${suite.clerk.userId}`,
          `${suite.inst.admin.userId}.users.delete.${suite.clerk.userId}`,
          `${suite.clerk.userId}.users.read.${suite.reader.userId}`,
          `${suite.clerk.userId}.users.read.${suite.clerk.userId}`,
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
          expect((await serviceWhoami(suite.t)).body).toMatchObject({ statusCode: 401, errorCode: 'InvalidToken' });
          for (const header of ['Digest username="x"', 'Token abc', 'Negotiate abc']) {
            const unsupported = await api().http().get(path).set('Authorization', header);
            expect(unsupported.status).toBe(401);
            expect(unsupported.body).toEqual({ statusCode: 401, errorCode: 'InvalidToken', message: expect.any(String) });
            expect((await serviceWhoami(suite.t, header)).body).toMatchObject({ statusCode: 401, errorCode: 'InvalidToken' });
          }
        }
        expect(suite.proxy.calls).toEqual([]);
      });

      it('invalid tokens: the service own code and message, passed on exactly', async () => {
        const tampered = `${suite.clerk.accessToken.slice(0, -2)}${suite.clerk.accessToken.endsWith('AA') ? 'BB' : 'AA'}`;
        const headers = [
          'Bearer not-a-jwt',
          `Bearer ${tampered}`,
          `Bearer ${suite.clerk.refreshToken}`, // a refresh token used as an access token
          `Basic ${suite.inst.application.id}:wrong-secret`,
          'Basic unknown-application:some-secret',
        ];
        for (const header of headers) {
          const expected = await serviceWhoami(suite.t, header);
          expect(expected).toEqual({ status: 401, body: { statusCode: 401, errorCode: 'InvalidToken', message: expect.any(String) } });
          for (const path of ['/orders/o-1', '/profile']) {
            const res = await api().http().get(path).set('Authorization', header);
            expect({ header, status: res.status, body: res.body as unknown }).toEqual({ header, status: 401, body: expected.body });
            expect(res.headers['www-authenticate']).toBe(
              header.startsWith('Basic') ? 'Basic realm="portcullis"' : 'Bearer realm="portcullis", error="invalid_token"',
            );
          }
        }
        expect(suite.proxy.count('/roles/check-permission')).toBe(0);
      });

      it('a revoked token: allowed before GET /revoke-token, the service 401 after', async () => {
        const session = await signIn(suite.t, suite.membershipId, suite.reader.username, suite.reader.password);
        await api().http().get('/orders/o-1').set('Authorization', session.auth).expect(200);
        await suite.t.http().get('/revoke-token').set('Authorization', session.auth).expect(204);
        const expected = await serviceWhoami(suite.t, session.auth);
        expect(expected).toEqual({ status: 401, body: { statusCode: 401, errorCode: 'TokenWasRevoked', message: expect.any(String) } });
        for (const path of ['/orders/o-1', '/profile']) {
          const res = await api().http().get(path).set('Authorization', session.auth);
          expect(res.status).toBe(401);
          expect(res.body).toEqual(expected.body);
        }
        // The reader's other session is untouched.
        await api().http().get('/orders/o-1').set('Authorization', suite.reader.auth).expect(200);
      });

      it('a frozen user: its tokens stop working at once (Bearer answers are never cached)', async () => {
        const frozen = await createUserWithRole(suite.t, suite.inst, 'frozen', ['orders.read']);
        await api().http().get('/orders/o-1').set('Authorization', frozen.auth).expect(200);
        await suite.t.http().post(`/memberships/${suite.membershipId}/users/${frozen.userId}/freeze`).set('Authorization', suite.inst.admin.auth)
          .expect((r) => expect(r.status).toBeLessThan(300));
        const expected = await serviceWhoami(suite.t, frozen.auth);
        expect(expected.status).toBe(401);
        const res = await api().http().get('/orders/o-1').set('Authorization', frozen.auth);
        expect(res.status).toBe(401);
        expect(res.body).toEqual(expected.body);
      });

      it('a valid token of another membership than the API: 401 InvalidToken', async () => {
        const other = await extraApi(kind, settings({ MembershipId: 'another-membership' }));
        for (const header of [suite.clerk.auth, suite.inst.application.basic]) {
          const res = await other.http().get('/profile').set('Authorization', header);
          expect(res.status).toBe(401);
          expect(res.body).toEqual({ statusCode: 401, errorCode: 'InvalidToken', message: expect.any(String) });
        }
      });
    });

    describe('Basic tokens', () => {
      it('an application: allowed with the permission, 403 without, verified on every request when there is no cache', async () => {
        const app = suite.inst.application;
        const path = `/directory/${suite.clerk.userId}`;
        for (let i = 0; i < 2; i += 1) {
          const res = await api().http().get(path).set('Authorization', app.basic);
          expect(res.status).toBe(200);
          expect(res.body).toEqual({
            route: 'directory.get',
            caller: app.id,
            kind: 'Basic',
            permission: `${app.id}.users.read.${suite.clerk.userId}`,
            params: { userId: suite.clerk.userId },
          });
        }
        // The standard base64 form of Basic is forwarded unchanged and accepted by the service too.
        const base64 = `Basic ${Buffer.from(`${app.id}:${app.secret}`).toString('base64')}`;
        await api().http().get(path).set('Authorization', base64).expect(200)
          .expect((r) => expect(r.body).toMatchObject({ caller: app.id, kind: 'Basic' }));
        await api().http().get('/orders/o-1').set('Authorization', app.basic).expect(403).expect(hasBody(ACCESS_DENIED));
        await api().http().get('/profile').set('Authorization', app.basic).expect(200)
          .expect((r) => expect(r.body).toMatchObject({ caller: app.id, kind: 'Basic' }));
        expect(suite.proxy.count('/whoami')).toBe(5);
        expect(suite.proxy.count('/roles/check-permission')).toBe(4);
      });
    });

    describe('placeholders', () => {
      it('resolve from route, query, header and env', async () => {
        const res = await api().http().get('/reports').query({ kind: 'monthly' }).set('X-Tenant', 'acme').set('Authorization', suite.clerk.auth);
        expect(res.status).toBe(200);
        expect(res.body.permission).toBe(`${suite.clerk.userId}.reports-eu.monthly.acme`);
        process.env['REGION'] = 'us';
        await api().http().get('/reports').query({ kind: 'monthly' }).set('X-Tenant', 'acme').set('Authorization', suite.clerk.auth).expect(403);
        expect(suite.proxy.permissions).toEqual([`${suite.clerk.userId}.reports-eu.monthly.acme`, `${suite.clerk.userId}.reports-us.monthly.acme`]);
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
          const res = await send().set('Authorization', suite.clerk.auth);
          expect({ index, status: res.status, body: res.body as unknown }).toEqual({ index, status: 403, body: ACCESS_DENIED });
          process.env['REGION'] = 'eu';
        }
        // Authenticated first, never asked about the permission.
        expect(suite.proxy.count('/whoami')).toBe(requests.length);
        expect(suite.proxy.permissions).toEqual([]);
      });

      it('a value the service refuses to evaluate (an expression over its length limit) is a 403, not a 503', async () => {
        const long = 'a'.repeat(600);
        const direct = await suite.t.http().get('/roles/check-permission').query({ permission: `${suite.clerk.userId}.orders.read.${long}` })
          .set('Authorization', suite.clerk.auth);
        expect(direct.status).toBe(400);
        expect(direct.body.errorCode).toBe('InvalidPermission');
        await api().http().get(`/orders/${long}`).set('Authorization', suite.clerk.auth).expect(403).expect(hasBody(ACCESS_DENIED));
        expect(suite.proxy.permissions).toEqual([`${suite.clerk.userId}.orders.read.${long}`]);
      });

      it('an unresolvable query, header or env placeholder denies; an invalid token still gets 401 first', async () => {
        const reports = () => api().http().get('/reports').set('Authorization', suite.clerk.auth);
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
        expect(suite.proxy.count('/whoami')).toBe(6);
        expect(suite.proxy.permissions).toEqual([]);

        const invalid = await api().http().get('/reports').set('Authorization', 'Bearer not-a-jwt');
        expect(invalid.status).toBe(401);
        expect(invalid.body).toEqual((await serviceWhoami(suite.t, 'Bearer not-a-jwt')).body);
      });

      it('a route placeholder without a value is kept as written', async () => {
        const list = (caller: SignedIn) => api().http().get('/orders').set('Authorization', caller.auth);
        const wildcard = await list(suite.clerk);
        expect(wildcard.status).toBe(200);
        expect(wildcard.body.permission).toBe(`${suite.clerk.userId}.orders.read.%7BorderId%7D`);
        await list(suite.reader).expect(403).expect(hasBody(ACCESS_DENIED));
        await list(suite.lister).expect(200);
        expect(suite.proxy.permissions).toEqual([
          `${suite.clerk.userId}.orders.read.%7BorderId%7D`,
          `${suite.reader.userId}.orders.read.%7BorderId%7D`,
          `${suite.lister.userId}.orders.read.%7BorderId%7D`,
        ]);
        // The literal names only the list route, not an order.
        await api().http().get('/orders/o-1').set('Authorization', suite.lister.auth).expect(403);
      });
    });

    it('precedence: the handler mode wins over the controller, permission segments merge', async () => {
      // Controller authorized, handler unauthorized.
      await api().http().get('/orders/public/summary').expect(200).expect((r) => expect(r.body.route).toBe('orders.summary'));
      expect(suite.proxy.calls).toEqual([]);
      // Controller authorized, handler self-authorized: the reader lacks orders.read.o-9.
      await api().http().get('/orders/o-9/notes').expect(401);
      await api().http().get('/orders/o-9/notes').set('Authorization', suite.reader.auth).expect(200)
        .expect((r) => expect(r.body).toMatchObject({ route: 'orders.notes', caller: suite.reader.userId, permission: null }));
      expect(suite.proxy.permissions).toEqual([]);
      // Handler action with the controller's object.
      await api().http().delete('/orders/o-2').set('Authorization', suite.reader.auth).expect(403);
      // Controller self-authorized, handler authorized.
      await api().http().get('/profile/audit').set('Authorization', suite.reader.auth).expect(200);
      await api().http().get('/profile/audit').set('Authorization', suite.clerk.auth).expect(403).expect(hasBody(ACCESS_DENIED));
      // Controller unauthorized, handler authorized.
      await api().http().get('/docs/drafts').expect(401);
      await api().http().get('/docs/drafts').set('Authorization', suite.clerk.auth).expect(200);
      await api().http().get('/docs/drafts').set('Authorization', suite.reader.auth).expect(403);
      expect(suite.proxy.permissions).toEqual([
        `${suite.reader.userId}.orders.delete.o-2`,
        `${suite.reader.userId}.audit.read.*`,
        `${suite.clerk.userId}.audit.read.*`,
        `${suite.clerk.userId}.drafts.write.*`,
        `${suite.reader.userId}.drafts.write.*`,
      ]);
    });

    it('concurrent identical requests share one call to the service', async () => {
      // Long enough for all five to reach the library while the first lookups are pending.
      suite.proxy.delayMs = 400;
      const answers = await Promise.all(
        Array.from({ length: 5 }, () => api().http().get('/orders/o-3').set('Authorization', suite.clerk.auth)),
      );
      suite.proxy.delayMs = 0;
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      expect([suite.proxy.count('/whoami'), suite.proxy.count('/roles/check-permission')]).toEqual([1, 1]);
      // Settled calls are forgotten: the next request asks again.
      await api().http().get('/orders/o-3').set('Authorization', suite.clerk.auth).expect(200);
      expect([suite.proxy.count('/whoami'), suite.proxy.count('/roles/check-permission')]).toEqual([2, 2]);
    });

    it('503 when the service does not answer within TimeoutMs, and the call it gave up is closed', async () => {
      const impatient = await extraApi(kind, settings({ TimeoutMs: 300 }));
      suite.proxy.mode = 'hang';
      const res = await settles(impatient.http().get('/orders/o-1').set('Authorization', suite.clerk.auth), 'the answer while the service hangs');
      expect(res.status).toBe(503);
      expect(res.body).toEqual(UNAVAILABLE);
      expect(res.headers['retry-after']).toBe('1');
      // The library ended its call at the deadline rather than leaving it to hang beside the answer.
      expect(suite.proxy.hung.held).toBeGreaterThanOrEqual(1);
      await eventually(async () => (suite.proxy.hung.closedByCaller === suite.proxy.hung.held ? true : undefined), 'the hung calls closed by the library');
    });

    it('503 AuthenticationServiceUnavailable, never 401, when the service answers 500', async () => {
      suite.proxy.mode = 'fail';
      for (const header of [suite.clerk.auth, 'Bearer not-a-jwt', suite.inst.application.basic]) {
        for (const path of ['/orders/o-1', '/profile']) {
          const res = await api().http().get(path).set('Authorization', header);
          expect({ header, path, status: res.status, body: res.body as unknown }).toEqual({ header, path, status: 503, body: UNAVAILABLE });
          expect(res.headers['retry-after']).toBe('1');
        }
      }
      await api().http().get('/public/ping').expect(200);
      // /whoami answers, the permission check fails.
      suite.proxy.mode = 'fail-permission-checks';
      await api().http().get('/orders/o-1').set('Authorization', suite.clerk.auth).expect(503).expect(hasBody(UNAVAILABLE));
      await api().http().get('/profile').set('Authorization', suite.clerk.auth).expect(200);
      suite.proxy.failureStatus = 502;
      await api().http().get('/orders/o-1').set('Authorization', suite.clerk.auth).expect(503).expect(hasBody(UNAVAILABLE));
      suite.proxy.mode = 'forward';
      await api().http().get('/orders/o-1').set('Authorization', suite.clerk.auth).expect(200);
    });
  });
});
