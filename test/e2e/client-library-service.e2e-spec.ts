/** Acceptance tests of the client library (@portcullis/client, packages/client) against the REAL service; the fixture is test/support/client-library-suite.ts. */
import { bootInstallation, type Installation } from '../support/api';
import type { TestApp } from '../support/app';
import { ACCESS_DENIED, hasBody, KINDS, UNAVAILABLE, useClientLibrarySuite } from '../support/client-library-suite';
import {
  type ApiKind,
  closedPort,
  type ProtectedApi,
  serviceWhoami,
  sleep,
  startExampleApi,
  startTestApi,
} from '../support/protected-apps';

/** The client library, one API at a time: precedence, a path prefix, the Basic token cache, an unreachable service, the example apps, expired tokens. (Split by behaviour; see also client-library.e2e-spec.ts.) */
describe('client library: a third-party API protected by the real service', () => {
  const suite = useClientLibrarySuite();
  const { apis, settings, extraApi, extraProxy } = suite;

  it('precedence, Express: middleware mounted before routing keeps the route placeholder as written', async () => {
    await apis.express.http().get('/admin/reports').set('Authorization', suite.lister.auth).expect(200)
      .expect((r) => expect(r.body.permission).toBe(`${suite.lister.userId}.admin.manage.%7Bsection%7D`));
    await apis.express.http().get('/admin/reports').set('Authorization', suite.clerk.auth).expect(403).expect(hasBody(ACCESS_DENIED));
    await apis.express.http().get('/admin/reports').expect(401);
  });

  it('BaseUrl with a path prefix: calls go to <prefix>/whoami and <prefix>/roles/check-permission', async () => {
    const prefixed = await extraProxy(suite.t.url, '/auth/');
    for (const baseUrl of [prefixed.baseUrl, prefixed.baseUrl.replace(/\/$/, '')]) {
      for (const kind of KINDS) {
        prefixed.calls.length = 0;
        const api = await extraApi(kind, settings({ BaseUrl: baseUrl }));
        await api.http().get('/orders/o-1').set('Authorization', suite.clerk.auth).expect(200);
        await api.http().get('/orders/o-2').set('Authorization', suite.reader.auth).expect(403).expect(hasBody(ACCESS_DENIED));
        const invalid = await api.http().get('/profile').set('Authorization', 'Bearer not-a-jwt');
        expect(invalid.status).toBe(401);
        expect(invalid.body).toEqual((await serviceWhoami(suite.t, 'Bearer not-a-jwt')).body);
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
    await unprefixed.http().get('/orders/o-1').set('Authorization', suite.clerk.auth).expect(503).expect(hasBody(UNAVAILABLE));
  });

  it('Basic token cache: a hit within the TTL skips the service; Bearer is never cached', async () => {
    const counting = await extraProxy(suite.t.url);
    const ttlSeconds = 4;
    const cached = await Promise.all(KINDS.map((kind) => extraApi(kind, settings({ BaseUrl: counting.baseUrl, BasicTokenCacheTTL: ttlSeconds }))));
    const path = `/directory/${suite.clerk.userId}`;
    const basic = suite.inst.application.basic;
    for (const api of cached) await api.http().get(path).set('Authorization', basic).expect(200);
    // Every cache entry was filled by now: each expires at most ttlSeconds after this instant.
    const filledBy = Date.now();
    expect([counting.count('/whoami'), counting.count('/roles/check-permission')]).toEqual([2, 2]);
    for (const api of cached) {
      await api.http().get(path).set('Authorization', basic).expect(200);
      await api.http().get('/profile').set('Authorization', basic).expect(200);
    }
    expect([counting.count('/whoami'), counting.count('/roles/check-permission')]).toEqual([2, 2]);
    // Bearer tokens: every request goes to the service.
    for (const api of cached) {
      await api.http().get(path).set('Authorization', suite.inst.admin.auth).expect(200);
      await api.http().get(path).set('Authorization', suite.inst.admin.auth).expect(200);
    }
    expect([counting.count('/whoami'), counting.count('/roles/check-permission')]).toEqual([6, 6]);
    // After the TTL the application is verified again.
    await sleep(filledBy + ttlSeconds * 1000 + 100 - Date.now());
    for (const api of cached) await api.http().get(path).set('Authorization', basic).expect(200);
    expect([counting.count('/whoami'), counting.count('/roles/check-permission')]).toEqual([8, 8]);
  });

  it('Basic token cache: a rotated secret keeps working until the TTL ends, then gets 401', async () => {
    const counting = await extraProxy(suite.t.url);
    const ttlSeconds = 4;
    const cached = await Promise.all(KINDS.map((kind) => extraApi(kind, settings({ BaseUrl: counting.baseUrl, BasicTokenCacheTTL: ttlSeconds }))));
    const created = await suite.t.http().post(`/memberships/${suite.membershipId}/applications`).set('Authorization', suite.inst.admin.auth)
      .send({ name: 'rotating-app', role: 'admin' });
    expect(created.status).toBe(201);
    const appId = created.body._id as string;
    const oldBasic = `Basic ${appId}:${created.body.secret as string}`;
    const path = `/directory/${suite.clerk.userId}`;

    for (const api of cached) await api.http().get(path).set('Authorization', oldBasic).expect(200);
    // Every cache entry was filled by now: each expires at most ttlSeconds after this instant.
    const warmedAt = Date.now();
    const rotated = await suite.t.http().post(`/memberships/${suite.membershipId}/applications/${appId}/secret`).set('Authorization', suite.inst.admin.auth);
    expect(rotated.status).toBe(200);
    const newBasic = `Basic ${appId}:${rotated.body.secret as string}`;
    expect(newBasic).not.toBe(oldBasic);
    const rejected = await serviceWhoami(suite.t, oldBasic);
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
      for (const header of [suite.clerk.auth, 'Bearer not-a-jwt', suite.inst.application.basic]) {
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
      suite.proxy.reset();
      const api = await startExampleApi(kind, settings());
      suite.closeAfterAll(api);
      await api.http().get('/health').expect(200, { status: 'ok' });
      await api.http().get('/orders').expect(401);
      await api.http().get('/orders').set('Authorization', suite.clerk.auth).expect(200);
      await api.http().get('/orders/o-1').set('Authorization', suite.reader.auth).expect(200, { id: 'o-1', readBy: suite.reader.userId });
      await api.http().get('/orders/o-2').set('Authorization', suite.reader.auth).expect(403).expect(hasBody(ACCESS_DENIED));
      await api.http().delete('/orders/o-1').set('Authorization', suite.clerk.auth).expect(204);
      await api.http().delete('/orders/o-2').set('Authorization', suite.clerk.auth).expect(403);
      await api.http().get('/reports?kind=monthly').set('X-Tenant', 'acme').set('Authorization', suite.clerk.auth).expect(200);
      await api.http().get('/reports?kind=monthly').set('X-Tenant', 'a.b').set('Authorization', suite.clerk.auth).expect(403);
      await api.http().get('/profile').set('Authorization', suite.inst.application.basic)
        .expect(200, { id: suite.inst.application.id, kind: 'Basic', role: 'admin' });
      await api.http().get('/orders').set('Authorization', 'Bearer not-a-jwt').expect(401);
      expect(suite.proxy.permissions).toEqual([
        `${suite.clerk.userId}.orders.read.*`,
        `${suite.reader.userId}.orders.read.o-1`,
        `${suite.reader.userId}.orders.read.o-2`,
        `${suite.clerk.userId}.orders.delete.o-1`,
        `${suite.clerk.userId}.orders.delete.o-2`,
        `${suite.clerk.userId}.reports-eu.monthly.acme`,
      ]);
    }
  });

  describe('a membership whose access tokens live 1 second, on its own service', () => {
    let short: TestApp;
    let shortInst: Installation;
    let signedInAt: number;
    const shortApis = {} as Record<ApiKind, ProtectedApi>;

    beforeAll(async () => {
      ({ t: short, inst: shortInst } = await bootInstallation({ membership: { expires_in: 1 } }));
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
