import { createHash } from 'node:crypto';
import { type AuthorizationOutcome, type EndpointRule, PortcullisClient, type ProtectedRequest } from './client';
import { useFakeService } from './testing/use-fake-service';
import { closedPortUrl, sleep } from './testing/fake-service';

const MEMBERSHIP = 'm-1';
const BEARER = 'Bearer user-token';
const BASIC = 'Basic app-1:secret-1';
const USER = { _id: 'u-1', username: 'alice', membership_id: MEMBERSHIP, role: 'staff' };
const APP = { _id: 'app-1', name: 'billing', membership_id: MEMBERSHIP, role: 'service' };

const ordersRead: EndpointRule = { mode: 'authorized', permission: { action: 'read', object: '{orderId}' } };

function request(authorization: string | undefined, extra: Partial<ProtectedRequest> = {}): ProtectedRequest {
  return {
    authorization,
    routeTemplate: '/orders/:orderId',
    params: { orderId: 'o-1' },
    query: {},
    headers: authorization === undefined ? {} : { authorization },
    ...extra,
  };
}

/** One turn of the event loop: lets socket events and the promises they settle run. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function expectDenied(outcome: AuthorizationOutcome, status: number, errorCode: string): void {
  expect(outcome.allowed).toBe(false);
  if (outcome.allowed) return;
  expect(outcome.status).toBe(status);
  expect(outcome.body.statusCode).toBe(status);
  expect(outcome.body.errorCode).toBe(errorCode);
  expect(typeof outcome.body.message).toBe('string');
}

describe('PortcullisClient.authorize against a stand-in service', () => {
  const fake = useFakeService('/auth/');
  const clients: PortcullisClient[] = [];

  function client(extra: { BasicTokenCacheTTL?: number; TimeoutMs?: number; BaseUrl?: string } = {}): PortcullisClient {
    const created = new PortcullisClient({ BaseUrl: fake.service.baseUrl, MembershipId: MEMBERSHIP, ...extra });
    clients.push(created);
    return created;
  }

  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  /** The caller is allowed after one /whoami and one /roles/check-permission, each with its header as-is. */
  async function expectAllowedByWhoamiThenCheck(authorization: string, identity: typeof USER | typeof APP, tokenKind: 'Bearer' | 'Basic', permission: string): Promise<void> {
    fake.service.accept(authorization, identity, [permission]);
    const outcome = await client().authorize(request(authorization), ordersRead);
    expect(outcome).toEqual({ allowed: true, principal: { identity, tokenKind, permission } });
    expect(fake.service.calls).toEqual([
      { path: 'whoami', authorization, permission: undefined },
      { path: 'check-permission', authorization, permission },
    ]);
  }

  describe('Bearer', () => {
    it('calls /whoami then /roles/check-permission under the path prefix, forwarding the header as-is', async () => {
      await expectAllowedByWhoamiThenCheck(BEARER, USER, 'Bearer', 'u-1.orders.read.o-1');
    });

    it('accepts the scheme in any case', async () => {
      fake.service.accept('bearer user-token', USER, ['u-1.orders.read.o-1']);
      const outcome = await client().authorize(request('bearer user-token'), ordersRead);
      expect(outcome.allowed).toBe(true);
    });

    it('answers 403 AccessDenied when the permission is missing', async () => {
      fake.service.accept(BEARER, USER, []);
      const outcome = await client().authorize(request(BEARER), ordersRead);
      expectDenied(outcome, 403, 'AccessDenied');
      expect(outcome.allowed || outcome.headers).toEqual({});
    });

    it('passes the service 401 body on, with WWW-Authenticate', async () => {
      fake.service.revoke(BEARER, 'TokenWasRevoked', 'The token was revoked.');
      const outcome = await client().authorize(request(BEARER), ordersRead);
      expect(outcome).toMatchObject({
        allowed: false,
        status: 401,
        body: { statusCode: 401, errorCode: 'TokenWasRevoked', message: 'The token was revoked.' },
        headers: { 'WWW-Authenticate': expect.stringContaining('Bearer') as unknown },
      });
      expect(fake.service.count('check-permission')).toBe(0);
    });

    it('passes on a 401 of the permission check too (token revoked between the calls)', async () => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.o-1']);
      fake.service.checkPermission = 'expired401';
      const outcome = await client().authorize(request(BEARER), ordersRead);
      expectDenied(outcome, 401, 'TokenWasExpired');
      expect(outcome.allowed || outcome.body.message).toBe('The token expired.');
    });

    it('refuses an identity of another membership with 401 InvalidToken', async () => {
      fake.service.accept(BEARER, { ...USER, membership_id: 'm-other' }, ['u-1.orders.read.o-1']);
      const outcome = await client().authorize(request(BEARER), ordersRead);
      expectDenied(outcome, 401, 'InvalidToken');
      expect(fake.service.count('check-permission')).toBe(0);
    });

    it('never caches Bearer answers', async () => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.o-1']);
      const c = client({ BasicTokenCacheTTL: 60 });
      await c.authorize(request(BEARER), ordersRead);
      fake.service.revoke(BEARER, 'TokenWasRevoked', 'revoked');
      const outcome = await c.authorize(request(BEARER), ordersRead);
      expectDenied(outcome, 401, 'TokenWasRevoked');
      expect(fake.service.count('whoami')).toBe(2);
    });
  });

  describe('Authorization header', () => {
    it.each<[string, string | undefined]>([
      ['missing', undefined],
      ['empty', ''],
      ['blank', '   '],
      ['an unsupported scheme', 'Digest username="a"'],
      ['a scheme without token', 'Bearer'],
      ['a token with inner whitespace', 'Bearer a b'],
      ['a token with control characters', 'Bearer a\tb'],
      ['a token with non-ASCII', 'Bearer tökén'],
      ['an oversized header', `Bearer ${'a'.repeat(9000)}`],
    ])('answers 401 InvalidToken without calling the service for %s', async (_label, header) => {
      const outcome = await client().authorize(request(header), ordersRead);
      expectDenied(outcome, 401, 'InvalidToken');
      expect(outcome.allowed || outcome.headers['WWW-Authenticate']).toMatch(/^Bearer realm="portcullis"/);
      expect(fake.service.calls).toHaveLength(0);
    });

    it('does not call the service for unauthorized endpoints', async () => {
      const outcome = await client().authorize(request(undefined), { mode: 'unauthorized' });
      expect(outcome).toEqual({ allowed: true, principal: null });
      expect(fake.service.calls).toHaveLength(0);
    });
  });

  describe('self-authorized', () => {
    it('checks the token only', async () => {
      fake.service.accept(BEARER, USER);
      const outcome = await client().authorize(request(BEARER), { mode: 'self-authorized' });
      expect(outcome).toEqual({ allowed: true, principal: { identity: USER, tokenKind: 'Bearer' } });
      expect(fake.service.count('check-permission')).toBe(0);
    });

    it('still needs a valid token', async () => {
      const outcome = await client().authorize(request(BEARER), { mode: 'self-authorized' });
      expectDenied(outcome, 401, 'InvalidToken');
    });
  });

  describe('placeholders', () => {
    it('denies an unresolvable query placeholder with 403 and no permission call', async () => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.t1']);
      const rule: EndpointRule = { mode: 'authorized', permission: { action: 'read', object: '{query::tenant}' } };
      expectDenied(await client().authorize(request(BEARER), rule), 403, 'AccessDenied');
      expect(fake.service.count('check-permission')).toBe(0);
      const allowed = await client().authorize(request(BEARER, { query: { tenant: 't1' } }), rule);
      expect(allowed.allowed).toBe(true);
    });

    it.each(['*', 'a.b', 'a b', '%00', 'x\ty', 'é', ''])('denies the hostile header value %j without a permission call', async (value) => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.*']);
      const rule: EndpointRule = { mode: 'authorized', permission: { action: 'read', object: '{header::x-tenant}' } };
      const outcome = await client().authorize(request(BEARER, { headers: { 'x-tenant': value } }), rule);
      expectDenied(outcome, 403, 'AccessDenied');
      expect(fake.service.count('check-permission')).toBe(0);
    });

    it('sends a route placeholder without value as the literal %7Bname%7D', async () => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.%7BorderId%7D']);
      const outcome = await client().authorize(request(BEARER, { routeTemplate: '/orders', params: {} }), ordersRead);
      expect(outcome.allowed).toBe(true);
      expect(fake.service.calls[1]?.permission).toBe('u-1.orders.read.%7BorderId%7D');
    });

    it('reads env placeholders from process.env at request time', async () => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.eu']);
      const rule: EndpointRule = { mode: 'authorized', permission: { action: 'read', object: '{env::PORTCULLIS_TEST_REGION}' } };
      expectDenied(await client().authorize(request(BEARER), rule), 403, 'AccessDenied');
      process.env['PORTCULLIS_TEST_REGION'] = 'eu';
      try {
        expect((await client().authorize(request(BEARER), rule)).allowed).toBe(true);
      } finally {
        delete process.env['PORTCULLIS_TEST_REGION'];
      }
    });

    it('denies with 403 when the service refuses the expression as invalid, and does not cache that', async () => {
      fake.service.accept(BASIC, APP, ['app-1.orders.read.o-1']);
      fake.service.checkPermission = 'invalidPermission400';
      const c = client({ BasicTokenCacheTTL: 60 });
      const outcome = await c.authorize(request(BASIC), ordersRead);
      expectDenied(outcome, 403, 'AccessDenied');
      expect(outcome.allowed || outcome.detail).toContain('InvalidPermission');
      fake.service.checkPermission = 'normal';
      expect((await c.authorize(request(BASIC), ordersRead)).allowed).toBe(true);
      expect(fake.service.count('check-permission')).toBe(2);
    });
  });

  describe('Basic', () => {
    it('reads the application with the token itself, then checks the permission', async () => {
      await expectAllowedByWhoamiThenCheck(BASIC, APP, 'Basic', 'app-1.orders.read.o-1');
    });

    it('answers a Basic challenge on 401', async () => {
      const outcome = await client().authorize(request(BASIC), ordersRead);
      expectDenied(outcome, 401, 'InvalidToken');
      expect(outcome.allowed || outcome.headers['WWW-Authenticate']).toBe('Basic realm="portcullis"');
    });

    it('forwards a base64 Basic token unchanged', async () => {
      const encoded = `Basic ${Buffer.from('app-1:secret-1').toString('base64')}`;
      fake.service.accept(encoded, APP, ['app-1.orders.read.o-1']);
      expect((await client().authorize(request(encoded), ordersRead)).allowed).toBe(true);
      expect(fake.service.calls[0]?.authorization).toBe(encoded);
    });

    it('does not cache without a TTL', async () => {
      fake.service.accept(BASIC, APP, ['app-1.orders.read.o-1']);
      const c = client({ BasicTokenCacheTTL: 0 });
      await c.authorize(request(BASIC), ordersRead);
      await c.authorize(request(BASIC), ordersRead);
      expect(fake.service.count('whoami')).toBe(2);
      expect(fake.service.count('check-permission')).toBe(2);
    });

    it('caches the application and each permission answer until the TTL ends; a rotated secret then fails', async () => {
      fake.service.accept(BASIC, APP, ['app-1.orders.read.o-1']);
      // Long enough for the calls below on a loaded machine, which must all find the answers kept.
      const c = client({ BasicTokenCacheTTL: 1.5 });
      expect((await c.authorize(request(BASIC), ordersRead)).allowed).toBe(true);
      // A denied answer is cached too.
      const denied = request(BASIC, { params: { orderId: 'o-2' } });
      expectDenied(await c.authorize(denied, ordersRead), 403, 'AccessDenied');
      expect(fake.service.count('whoami')).toBe(1);
      expect(fake.service.count('check-permission')).toBe(2);

      fake.service.revoke(BASIC); // the secret is rotated
      expect((await c.authorize(request(BASIC), ordersRead)).allowed).toBe(true);
      expectDenied(await c.authorize(denied, ordersRead), 403, 'AccessDenied');
      expect(fake.service.calls).toHaveLength(3);

      await sleep(1_550);
      expectDenied(await c.authorize(request(BASIC), ordersRead), 401, 'InvalidToken');
      expect(fake.service.count('whoami')).toBe(2);
    });

    it('gives a decision the cache holds at once, not as a promise; one that needs the service as a promise', async () => {
      fake.service.accept(BASIC, APP, ['app-1.orders.read.o-1']);
      const c = client({ BasicTokenCacheTTL: 60 });
      const first = c.decide(request(BASIC), ordersRead);
      expect(first).toBeInstanceOf(Promise);
      expect((await first).allowed).toBe(true);
      const kept = c.decide(request(BASIC), ordersRead);
      expect(kept).not.toBeInstanceOf(Promise);
      expect(kept).toMatchObject({ allowed: true, principal: { identity: { _id: APP._id } } });
      // Another permission of the same caller: its identity is kept, its permission is not.
      expect(c.decide(request(BASIC, { params: { orderId: 'o-2' } }), ordersRead)).toBeInstanceOf(Promise);
      // Refused before any call: at once as well.
      expect(c.decide(request('Bearer'), ordersRead)).toMatchObject({ allowed: false, status: 401 });
    });

    it('keys the cache by a SHA-256 of the header, never the secret', async () => {
      fake.service.accept(BASIC, APP, ['app-1.orders.read.o-1']);
      const c = client({ BasicTokenCacheTTL: 60 });
      await c.authorize(request(BASIC), ordersRead);
      const digest = createHash('sha256').update(BASIC).digest('base64url');
      const keys = [
        ...c['identities']['cache']!.keys(),
        ...c['permissions']['cache']!.keys(),
      ];
      expect(keys).toHaveLength(2);
      for (const key of keys) {
        expect(key.startsWith(digest)).toBe(true);
        expect(key).not.toContain('secret-1');
      }
    });

    it('never caches failures', async () => {
      fake.service.accept(BASIC, APP, ['app-1.orders.read.o-1']);
      const c = client({ BasicTokenCacheTTL: 60 });
      fake.service.whoami = 'error500';
      expectDenied(await c.authorize(request(BASIC), ordersRead), 503, 'AuthenticationServiceUnavailable');
      fake.service.whoami = 'normal';
      fake.service.checkPermission = 'error500';
      expectDenied(await c.authorize(request(BASIC), ordersRead), 503, 'AuthenticationServiceUnavailable');
      fake.service.checkPermission = 'normal';
      expect((await c.authorize(request(BASIC), ordersRead)).allowed).toBe(true);
      expect(fake.service.count('whoami')).toBe(2); // the 500 was not cached; the later success was
      expect(fake.service.count('check-permission')).toBe(2);

      const other = 'Basic app-2:wrong';
      expectDenied(await c.authorize(request(other), ordersRead), 401, 'InvalidToken');
      fake.service.accept(other, { ...APP, _id: 'app-2' }, []);
      expectDenied(await c.authorize(request(other), ordersRead), 403, 'AccessDenied');
    });
  });

  describe('coalescing', () => {
    it('shares one HTTP call between concurrent identical lookups', async () => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.o-1']);
      fake.service.delayMs = 100;
      const c = client();
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => c.authorize(request(BEARER), ordersRead)));
      expect(outcomes.every((o) => o.allowed)).toBe(true);
      expect(fake.service.count('whoami')).toBe(1);
      expect(fake.service.count('check-permission')).toBe(1);
      // Settled lookups are forgotten: a later request calls again (Bearer is never cached).
      await c.authorize(request(BEARER), ordersRead);
      expect(fake.service.count('whoami')).toBe(2);
      expect(c['identities'].pending).toBe(0);
      expect(c['permissions'].pending).toBe(0);
    });

    it('keeps different tokens and different permissions apart', async () => {
      const other = 'Bearer other-token';
      fake.service.accept(BEARER, USER, ['u-1.orders.read.o-1']);
      fake.service.accept(other, { ...USER, _id: 'u-2' }, []);
      fake.service.delayMs = 50;
      const c = client();
      const [a, b, d] = await Promise.all([
        c.authorize(request(BEARER), ordersRead),
        c.authorize(request(other), ordersRead),
        c.authorize(request(BEARER, { params: { orderId: 'o-2' } }), ordersRead),
      ]);
      expect(a.allowed).toBe(true);
      expectDenied(b, 403, 'AccessDenied');
      expectDenied(d, 403, 'AccessDenied');
      expect(fake.service.count('whoami')).toBe(2);
      expect(fake.service.count('check-permission')).toBe(3);
    });

    it('shares a failure too, and does not keep it', async () => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.o-1']);
      fake.service.whoami = 'error500';
      fake.service.delayMs = 50;
      const c = client();
      const outcomes = await Promise.all(Array.from({ length: 5 }, () => c.authorize(request(BEARER), ordersRead)));
      for (const o of outcomes) expectDenied(o, 503, 'AuthenticationServiceUnavailable');
      expect(fake.service.count('whoami')).toBe(1);
      fake.service.whoami = 'normal';
      expect((await c.authorize(request(BEARER), ordersRead)).allowed).toBe(true);
    });
  });

  describe('service failures answer 503, never 401', () => {
    it.each([
      ['a 500', '/whoami', 'whoami', 'error500'],
      ['a 502 HTML page', '/whoami', 'whoami', 'error502'],
      ['an unparseable 200', '/whoami', 'whoami', 'garbage200'],
      ['a 200 of the wrong shape', '/whoami', 'whoami', 'wrongShape200'],
      ['a 401 that is not the service error body', '/whoami', 'whoami', 'html401'],
      ['a 404 (wrong BaseUrl)', '/whoami', 'whoami', 'notFound'],
      ['a redirect', '/whoami', 'whoami', 'redirect'],
      ['a 500', '/roles/check-permission', 'checkPermission', 'error500'],
      ['an unparseable 200', '/roles/check-permission', 'checkPermission', 'garbage200'],
      ['a 200 of the wrong shape', '/roles/check-permission', 'checkPermission', 'wrongShape200'],
      ['a 401 that is not the service error body', '/roles/check-permission', 'checkPermission', 'html401'],
    ] as const)('on %s from %s', async (_label, _path, endpoint, behaviour) => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.o-1']);
      fake.service[endpoint] = behaviour;
      const outcome = await client().authorize(request(BEARER), ordersRead);
      expectDenied(outcome, 503, 'AuthenticationServiceUnavailable');
      expect(outcome.allowed || outcome.detail).toBeTruthy();
      expect(outcome.allowed || outcome.headers['WWW-Authenticate']).toBeUndefined();
    });

    it('on a timeout: waits out TimeoutMs while the service hangs, then gives up', async () => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.o-1']);
      fake.service.whoami = 'hang';
      // The deadline runs on fake timers (the sockets stay real), so the test decides when it passes.
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      try {
        let settled: AuthorizationOutcome | undefined;
        const pending = client({ TimeoutMs: 200 })
          .authorize(request(BEARER), ordersRead)
          .then((outcome) => (settled = outcome));
        while (fake.service.count('whoami') === 0) await nextTurn();
        jest.advanceTimersByTime(199);
        await nextTurn();
        expect(settled).toBeUndefined();
        jest.advanceTimersByTime(1);
        const outcome = await pending;
        expectDenied(outcome, 503, 'AuthenticationServiceUnavailable');
        expect(outcome.allowed || outcome.detail).toMatch(/200 ms/);
      } finally {
        jest.useRealTimers();
      }
    });

    it('on a timeout of the permission check', async () => {
      fake.service.accept(BEARER, USER, ['u-1.orders.read.o-1']);
      fake.service.checkPermission = 'hang';
      const outcome = await client({ TimeoutMs: 150 }).authorize(request(BEARER), ordersRead);
      expectDenied(outcome, 503, 'AuthenticationServiceUnavailable');
    });

    it('when nothing listens', async () => {
      const outcome = await client({ BaseUrl: await closedPortUrl() }).authorize(request(BEARER), ordersRead);
      expectDenied(outcome, 503, 'AuthenticationServiceUnavailable');
      expect(outcome.allowed || outcome.body.message).not.toContain('127.0.0.1');
    });
  });
});
