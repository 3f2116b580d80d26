import express, { type Express } from 'express';
import request from 'supertest';
import { PortcullisClient } from './client';
import { PortcullisConfigError } from './errors';
import { portcullis } from './express';
import { principalOf } from './request';
import { useFakeService } from './testing/use-fake-service';
import { closedPortUrl } from './testing/fake-service';

const MEMBERSHIP = 'm-1';
const BEARER = 'Bearer express-user';
const BASIC = 'Basic app-9:s3cret';
const USER = { _id: 'u-1', username: 'alice', membership_id: MEMBERSHIP };
const APP = { _id: 'app-9', name: 'billing', membership_id: MEMBERSHIP };

function buildApp(client: PortcullisClient): Express {
  const guard = portcullis(client);
  const app = express();
  app.get('/orders', guard.authorized({ action: 'read' }), (_req, res) => {
    res.json(['o-1']);
  });
  app.get('/orders/:orderId', guard.authorized({ action: 'read', object: '{orderId}' }), (req, res) => {
    res.json({ id: req.params['orderId'], caller: principalOf(req)?.identity._id });
  });
  app.get('/tenants/items', guard.authorized({ object: '{query::tenant}' }), (_req, res) => {
    res.json('items');
  });
  app.get('/me', guard.selfAuthorized(), (req, res) => {
    const principal = principalOf(req);
    res.json({ id: principal?.identity._id, kind: principal?.tokenKind });
  });
  app.get('/ping', guard.unauthorized(), (_req, res) => {
    res.send('pong');
  });
  // Mounted before routing: the template is given explicitly; params are not known yet.
  app.use('/reports', guard.authorized({ route: '/reports/:year', action: 'read', object: '{year}' }));
  app.get('/reports/:year', (req, res) => {
    res.json(req.params['year']);
  });
  return app;
}

describe('Express middleware', () => {
  let client: PortcullisClient;
  let app: Express;
  const fake = useFakeService('/id/', () => client.close());

  beforeAll(() => {
    client = new PortcullisClient({ BaseUrl: fake.service.baseUrl, MembershipId: MEMBERSHIP, BasicTokenCacheTTL: 60 });
    app = buildApp(client);
  });

  it('answers 401 with the error body and WWW-Authenticate without a token', async () => {
    const res = await request(app).get('/orders').expect(401);
    expect(res.body).toMatchObject({ statusCode: 401, errorCode: 'InvalidToken' });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="portcullis"');
  });

  it('answers 401 for an unsupported scheme', async () => {
    const res = await request(app).get('/orders').set('Authorization', 'Negotiate abc').expect(401);
    expect(res.body.message).toContain('Negotiate');
    expect(fake.service.calls).toHaveLength(0);
  });

  it('uses req.route.path and req.params, and attaches the caller', async () => {
    fake.service.accept(BEARER, USER, ['u-1.orders.read.*', 'u-1.orders.read.o-5']);
    await request(app).get('/orders').set('Authorization', BEARER).expect(200, ['o-1']);
    await request(app).get('/orders/o-5').set('Authorization', BEARER).expect(200, { id: 'o-5', caller: 'u-1' });
    await request(app).get('/orders/o-6').set('Authorization', BEARER).expect(403);
  });

  it('tells onDenied which expression a 403 needed; in development the 403 names it and, without onDenied, the console does', async () => {
    fake.service.accept(BEARER, USER, ['u-1.orders.read.o-5']);
    const denials: Array<string | undefined> = [];
    const told = express();
    told.get('/orders/:orderId', portcullis(client, { onDenied: (denied) => denials.push(denied.required) }).authorized({ action: 'read', object: '{orderId}' }), (_req, res) => {
      res.json('ok');
    });
    const quiet = await request(told).get('/orders/o-6').set('Authorization', BEARER).expect(403);
    expect(denials).toEqual(['u-1.orders.read.o-6']);
    expect(quiet.body.message).not.toContain('orders.read');

    const before = process.env['NODE_ENV'];
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    process.env['NODE_ENV'] = 'development';
    try {
      const hinted = await request(app).get('/orders/o-7').set('Authorization', BEARER).expect(403);
      expect(hinted.body.message).toContain('Needed: u-1.orders.read.o-7');
      expect(warn).toHaveBeenCalledWith('[portcullis] 403 GET /orders/o-7: the caller needs u-1.orders.read.o-7');
    } finally {
      process.env['NODE_ENV'] = before;
      warn.mockRestore();
    }
  });

  it('denies hostile route values without asking the service', async () => {
    fake.service.accept(BEARER, USER, ['u-1.orders.read.*']);
    for (const path of ['/orders/a.b', '/orders/%2A', '/orders/a%20b', '/orders/a%00b', '/orders/%C3%A9', '/orders/a%252Eb']) {
      const res = await request(app).get(path).set('Authorization', BEARER).expect(403);
      expect(res.body).toMatchObject({ statusCode: 403, errorCode: 'AccessDenied' });
    }
    expect(fake.service.count('check-permission')).toBe(0);
  });

  it('denies a missing or repeated query placeholder, allows a good one', async () => {
    fake.service.accept(BEARER, USER, ['u-1.items.*.t1']);
    await request(app).get('/tenants/items').set('Authorization', BEARER).expect(403);
    await request(app).get('/tenants/items?tenant=t1&tenant=t2').set('Authorization', BEARER).expect(403);
    await request(app).get('/tenants/items?tenant=*').set('Authorization', BEARER).expect(403);
    expect(fake.service.count('check-permission')).toBe(0);
    await request(app).get('/tenants/items?tenant=t1').set('Authorization', BEARER).expect(200);
  });

  it('self-authorized: token only', async () => {
    fake.service.accept(BASIC, APP);
    await request(app).get('/me').set('Authorization', BASIC).expect(200, { id: 'app-9', kind: 'Basic' });
    expect(fake.service.count('check-permission')).toBe(0);
    await request(app).get('/me').expect(401);
  });

  it('unauthorized: public', async () => {
    await request(app).get('/ping').expect(200, 'pong');
    expect(fake.service.calls).toHaveLength(0);
  });

  it('before routing, takes the resource from the given route and keeps route placeholders as written', async () => {
    fake.service.accept(BEARER, USER, ['u-1.reports.read.%7Byear%7D']);
    await request(app).get('/reports/2026').set('Authorization', BEARER).expect(200, '"2026"');
    expect(fake.service.calls[1]?.permission).toBe('u-1.reports.read.%7Byear%7D');
  });

  it('answers 503 when the service is unreachable, and reports the detail to onDenied', async () => {
    const down = new PortcullisClient({ BaseUrl: await closedPortUrl(), MembershipId: MEMBERSHIP });
    const res = await request(buildApp(down)).get('/orders').set('Authorization', BEARER).expect(503);
    expect(res.body).toMatchObject({ statusCode: 503, errorCode: 'AuthenticationServiceUnavailable' });
    expect(res.headers['retry-after']).toBe('1');

    const details: string[] = [];
    const app = express();
    app.get('/x', portcullis(down, { onDenied: (denied) => details.push(denied.detail ?? '') }).selfAuthorized(), (_req, r) => {
      r.send('unreachable');
    });
    await request(app).get('/x').set('Authorization', BEARER).expect(503);
    expect(details).toEqual([expect.stringContaining('ECONNREFUSED')]);
    down.close();
  });

  it('throws a configuration error when the middleware is created', () => {
    const guard = portcullis(client);
    expect(() => guard.authorized({ subject: '{query::u}' })).toThrow(PortcullisConfigError);
    expect(() => guard.authorized({ action: 'read all' })).toThrow(PortcullisConfigError);
  });
});
