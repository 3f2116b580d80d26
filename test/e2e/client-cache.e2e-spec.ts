/**
 * The client library's cache (settings CacheTTL and StreamCredentials) against the REAL service:
 * an Express API protected by the library calls the service through a recording proxy
 * (test/support/protected-apps.ts), which counts the calls and can cut the event stream.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import request from 'supertest';
import { PortcullisClient, type PortcullisSettings, portcullis } from '@portcullis/client';
import { startTestApp, type TestApp } from '../support/app';
import { createApplicationWithPermissions, eventually, type Installation, setupInstallation, signIn, unique } from '../support/api';
import { createUserWithRole, ServiceProxy, type UserWithRole } from '../support/protected-apps';
import { FOLLOWED_EVENT_TYPES } from '../../packages/client/src/stream-cache';
import { EVENT_TYPES } from '../../src/events/event-types';

describe("the event types the client's cache follows", () => {
  it('are types the service records (or the stream would refuse them), and include every type the contract says drops answers', () => {
    const dropping = EVENT_TYPES.filter((type) => /^(User|Role|Application|Membership)/.test(type) || type === 'TokenRevoked' || type === 'TokenRefreshed');
    expect([...FOLLOWED_EVENT_TYPES].sort()).toEqual([...dropping].sort());
  });
});

/** An Express API on 127.0.0.1 whose /orders (orders.read) and /profile (the caller itself) `client` protects. */
async function startProtectedApi(client: PortcullisClient): Promise<{ url: string; close: () => Promise<void> }> {
  const guard = portcullis(client);
  const app = express();
  app.get('/orders', guard.authorized({ resource: 'orders', action: 'read' }), (_req, res) => {
    res.json({ ok: true });
  });
  app.get('/profile', guard.selfAuthorized(), (_req, res) => {
    res.json({ ok: true });
  });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('client library with CacheTTL: answers kept while the event stream is connected', () => {
  let t: TestApp;
  let inst: Installation;
  let proxy: ServiceProxy;
  let client: PortcullisClient;
  let api: { url: string; close: () => Promise<void> } | undefined;
  let apiUrl: string;
  let streamApp: { id: string; secret: string };

  const get = (path: string, auth: string, url = apiUrl) => request(url).get(path).set('Authorization', auth);
  /**
   * Asks the protected API (at `url`) for /orders until it answers other than 200 (`withinMs` at
   * most, a request every `pauseMs`): that answer, and how long after the call it came.
   */
  const firstRefusal = async (auth: string, withinMs = 3_000, pauseMs = 0, url = apiUrl): Promise<{ status: number; afterMs: number }> => {
    const since = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - since < withinMs) {
      status = (await get('/orders', auth, url)).status;
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    return { status, afterMs: Date.now() - since };
  };
  /** The settings of a client that keeps answers a minute and follows the stream, through the proxy. */
  const cachedSettings = (more: Partial<PortcullisSettings> = {}): PortcullisSettings => ({
    BaseUrl: proxy.baseUrl,
    MembershipId: inst.membership._id as string,
    CacheTTL: 60,
    StreamCredentials: `${streamApp.id}:${streamApp.secret}`,
    ...more,
  });
  const serviceCalls = () => proxy.calls.filter((call) => !call.path.endsWith('/events/stream')).length;
  const whoamiCalls = (auth: string) => proxy.calls.filter((call) => call.path === '/whoami' && call.authorization === auth).length;

  beforeAll(async () => {
    t = await startTestApp();
    inst = await setupInstallation(t);
    proxy = await ServiceProxy.start(t.url);
    streamApp = await createApplicationWithPermissions(t, inst.admin, ['events.read']);
    client = new PortcullisClient(cachedSettings());
    api = await startProtectedApi(client);
    apiUrl = api.url;
  });
  afterAll(async () => {
    client?.close();
    await api?.close();
    await proxy?.close();
    await t?.close();
  });

  /** A reader whose answers are in the cache: one request after the stream connected. */
  async function warmReader(): Promise<UserWithRole> {
    const reader = await createUserWithRole(t, inst, 'reader', ['orders.read']);
    await get('/orders', reader.auth).expect(200);
    await eventually(async () => (client.streamConnected ? true : undefined), 'the event stream to connect');
    await get('/orders', reader.auth).expect(200);
    return reader;
  }

  it('a repeated token is answered from the cache: no call to the service', async () => {
    const reader = await warmReader();
    const before = serviceCalls();
    for (let i = 0; i < 20; i++) await get('/orders', reader.auth).expect(200);
    expect(serviceCalls()).toBe(before);
  });

  it('a decision the cache holds is given at once (no promise), and a revocation turns it back into a call', async () => {
    const reader = await warmReader();
    const rule = { mode: 'authorized', permission: { resource: 'orders', action: 'read' } } as const;
    const kept = client.decide({ authorization: reader.auth, routeTemplate: '/orders' }, rule);
    expect(kept).toMatchObject({ allowed: true, principal: { identity: { _id: reader.userId } } });
    await t.http().post('/revoke-token').send({ token: reader.accessToken }).expect(204);
    await eventually(async () => (client.decide({ authorization: reader.auth, routeTemplate: '/orders' }, rule) instanceof Promise ? true : undefined), 'the revocation to drop the kept answer');
    expect(await client.decide({ authorization: reader.auth, routeTemplate: '/orders' }, rule)).toMatchObject({ allowed: false, status: 401 });
  });

  it('a revoked token gets its first 401 at the protected API within 1 s of the revoke answer', async () => {
    const reader = await warmReader();
    await t.http().post('/revoke-token').send({ token: reader.accessToken }).expect(204);
    const { status, afterMs } = await firstRefusal(reader.auth);
    expect(status).toBe(401);
    expect(afterMs).toBeLessThan(1_000);
  });

  it("a refresh that rotates the pair (revoke, the default) ends the old access token at the protected API within 1 s, as at the service", async () => {
    const reader = await warmReader();
    await t.http().post('/refresh-token').send({ token: reader.refreshToken }).expect(201);
    await t.http().get('/whoami').set('Authorization', reader.auth).expect(401);
    const { status, afterMs } = await firstRefusal(reader.auth);
    expect(status).toBe(401);
    expect(afterMs).toBeLessThan(1_000);
  });

  it('a refresh with revoke=false leaves the old pair valid: the protected API goes on answering it', async () => {
    const reader = await warmReader();
    await t.http().post('/refresh-token').query({ revoke: false }).send({ token: reader.refreshToken }).expect(201);
    await t.http().get('/whoami').set('Authorization', reader.auth).expect(200);
    const { status } = await firstRefusal(reader.auth, 500);
    expect(status).toBe(200);
  });

  it('a role losing the permission turns the cached allow into a 403 within 1 s', async () => {
    const reader = await warmReader();
    await t
      .http()
      .put(`/memberships/${reader.membershipId}/roles/${(await t.http().get(`/memberships/${reader.membershipId}/roles`).set('Authorization', inst.admin.auth).query({ limit: 1000 })).body.items.find((r: { slug: string }) => r.slug === reader.roleSlug)._id}`)
      .set('Authorization', inst.admin.auth)
      .send({ name: `${reader.roleSlug} renamed`, slug: reader.roleSlug, permissions: [] })
      .expect(200);
    const { status, afterMs } = await firstRefusal(reader.auth);
    expect(status).toBe(403);
    expect(afterMs).toBeLessThan(1_000);
  });

  it('an answer the service gave before a revocation is never kept, also when a request joined its lookup after the revocation arrived', async () => {
    // The reader's first session is kept in the cache: its answer going away shows that the revocation reached the client.
    const reader = await warmReader();
    const revoked = await signIn(t, reader.membershipId, reader.username, reader.password);
    // A: the service answers /whoami for the second session (200, before the revocation); the proxy holds that answer back.
    const held = proxy.holdNextAnswer('/whoami');
    const first = get('/profile', revoked.auth).then((res) => res.status);
    await held.answered;
    await t.http().post('/revoke-token').send({ token: revoked.accessToken }).expect(204);
    await eventually(async () => {
      const asked = whoamiCalls(reader.auth);
      await get('/profile', reader.auth).expect(200);
      return whoamiCalls(reader.auth) > asked ? true : undefined;
    }, "the revocation to drop the user's kept answers");

    // B: the same token, after the drop, while A's lookup is still waiting for its answer.
    const second = get('/profile', revoked.auth).then((res) => res.status);
    // B must ask the service itself. Had it joined A's lookup no call would come: the wait gives up after 2 s, and B gets A's 200.
    await eventually(async () => (whoamiCalls(revoked.auth) === 2 ? true : undefined), "B's own /whoami", 2_000).catch(() => undefined);
    held.release();
    expect(await first).toBe(200);
    expect(await second).toBe(401);
    // Nothing of the answer from before the revocation was kept.
    await get('/profile', revoked.auth).expect(401);
    await get('/profile', revoked.auth).expect(401);
  });

  it('a stream cut silently (connection open, no byte passing) stops the cache within seconds: a revocation then gets its 401', async () => {
    const reader = await warmReader();
    proxy.stallStreams();
    try {
      await t.http().post('/revoke-token').send({ token: reader.accessToken }).expect(204);
      // The client asks for a keep-alive every second and gives the stream up after a few silent ones.
      const { status, afterMs } = await firstRefusal(reader.auth, 10_000, 20);
      expect(status).toBe(401);
      expect(afterMs).toBeLessThan(5_000);
      expect(client.streamConnected).toBe(false);
    } finally {
      proxy.cutStreams();
      proxy.reset();
    }
    await eventually(async () => (client.streamConnected ? true : undefined), 'the stream to reconnect', 10_000);
  }, 30_000);

  describe('a change of the membership that ends every earlier token reaches the cached answers within 1 s', () => {
    // The admin's token ends with the others: signed in again for the tests that follow.
    afterEach(async () => {
      inst.admin = await signIn(t, inst.membership._id as string, inst.admin.username, inst.admin.password);
    });

    it('a rotated signing key (MembershipSecretKeyRotated): the next protected request answers 401', async () => {
      const reader = await warmReader();
      await t.http().post(`/memberships/${reader.membershipId}/secret-key`).set('Authorization', inst.admin.auth).expect(200);
      const { status, afterMs } = await firstRefusal(reader.auth);
      expect(status).toBe(401);
      expect(afterMs).toBeLessThan(1_000);
    });

    it('a new name, the tokens\' iss (MembershipUpdated): the next protected request answers 401', async () => {
      const reader = await warmReader();
      await t.http().put(`/memberships/${reader.membershipId}`).set('Authorization', inst.admin.auth).send({ name: unique('Renamed') }).expect(200);
      const { status, afterMs } = await firstRefusal(reader.auth);
      expect(status).toBe(401);
      expect(afterMs).toBeLessThan(1_000);
    });
  });

  describe('with BasicTokenCacheTTL as well: the Basic answers it keeps follow the stream too', () => {
    let basicClient: PortcullisClient;
    let basicApi: { url: string; close: () => Promise<void> } | undefined;
    let basicApiUrl: string;

    beforeAll(async () => {
      // A long Basic cache: without the stream, a rotated secret would work here for a minute (specification).
      basicClient = new PortcullisClient(cachedSettings({ BasicTokenCacheTTL: 60 }));
      basicApi = await startProtectedApi(basicClient);
      basicApiUrl = basicApi.url;
    });
    afterAll(async () => {
      basicClient?.close();
      await basicApi?.close();
    });

    const getOrders = (auth: string) => get('/orders', auth, basicApiUrl);
    /** An application allowed to read orders, its answers kept: asked until a repeated request makes no call. */
    async function warmApplication(): Promise<{ id: string; auth: string; role: { _id?: unknown; slug?: unknown } }> {
      const app = await createApplicationWithPermissions(t, inst.admin, ['orders.read']);
      const auth = `Basic ${app.id}:${app.secret}`;
      await getOrders(auth).expect(200);
      await eventually(async () => (basicClient.streamConnected ? true : undefined), 'the event stream to connect');
      await eventually(async () => {
        await getOrders(auth).expect(200);
        const asked = whoamiCalls(auth);
        await getOrders(auth).expect(200);
        return whoamiCalls(auth) === asked ? true : undefined;
      }, 'the application\'s answers to be kept');
      return { id: app.id, auth, role: app.role };
    }

    it('a rotated secret: the old one gets its first 401 at the protected API within 1 s', async () => {
      const app = await warmApplication();
      await t.http().post(`/memberships/${inst.membership._id as string}/applications/${app.id}/secret`).set('Authorization', inst.admin.auth).expect(200);
      const { status, afterMs } = await firstRefusal(app.auth, 3_000, 0, basicApiUrl);
      expect(status).toBe(401);
      expect(afterMs).toBeLessThan(1_000);
    });

    it("its role losing the permission: the kept allow turns into a 403 within 1 s", async () => {
      const app = await warmApplication();
      const m = inst.membership._id as string;
      await t
        .http()
        .put(`/memberships/${m}/roles/${String(app.role._id)}`)
        .set('Authorization', inst.admin.auth)
        .send({ name: `${String(app.role.slug)} emptied`, slug: app.role.slug, permissions: [] })
        .expect(200);
      const { status, afterMs } = await firstRefusal(app.auth, 3_000, 0, basicApiUrl);
      expect(status).toBe(403);
      expect(afterMs).toBeLessThan(1_000);
    });
  });

  it('with the stream cut, the next request asks the service (and sees a revocation at once); reconnected, the cache serves again', async () => {
    const reader = await warmReader();
    const other = await warmReader();
    proxy.cutStreams();
    await eventually(async () => (client.streamConnected ? undefined : true), 'the client to see the stream gone');

    const before = proxy.count('/whoami');
    await get('/orders', reader.auth).expect(200);
    await get('/orders', reader.auth).expect(200);
    expect(proxy.count('/whoami')).toBe(before + 2);
    // The revocation cannot come by the stream now; the service itself refuses the token.
    await t.http().post('/revoke-token').send({ token: other.accessToken }).expect(204);
    await get('/orders', other.auth).expect(401);

    proxy.refuseStreams = false;
    await eventually(async () => (client.streamConnected ? true : undefined), 'the stream to reconnect', 10_000);
    // Reconnected with Last-Event-ID, the client is sent what it missed (the revocation, and any
    // event the cut kept from it, such as the RoleCreated of `other`'s role, which empties the
    // cache): the cache serves once a request finds its answer kept from the one before.
    await eventually(async () => {
      await get('/orders', reader.auth).expect(200);
      const asked = proxy.count('/whoami');
      await get('/orders', reader.auth).expect(200);
      return proxy.count('/whoami') === asked ? true : undefined;
    }, 'the reconnected cache to serve a repeated token', 10_000);
    const after = proxy.count('/whoami');
    await get('/orders', reader.auth).expect(200);
    await get('/profile', reader.auth).expect(200);
    expect(proxy.count('/whoami')).toBe(after);
  }, 30_000);
});
