/**
 * Smoke tests of examples/protected-api against the stand-in service, so the examples keep
 * compiling (tsc follows these imports) and keep working.
 */
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { createApp as createExpressApp } from './express-app';
import { createApp as createNestApp } from './nest-app';
import { useFakeService } from '../../packages/client/src/testing/use-fake-service';

const MEMBERSHIP = 'm-1';
const BEARER = 'Bearer example-user';
const USER = { _id: 'u-1', username: 'alice', membership_id: MEMBERSHIP, role: 'staff' };

describe('examples/protected-api', () => {
  let nest: INestApplication;
  const servers: Array<{ name: string; server: () => Parameters<typeof request>[0] }> = [];
  const fake = useFakeService('/', async () => {
    delete process.env['REGION'];
    await nest.close();
  });

  beforeAll(async () => {
    process.env['REGION'] = 'eu';
    const settings = { BaseUrl: fake.service.baseUrl, MembershipId: MEMBERSHIP };
    nest = await createNestApp(settings);
    nest.useLogger(false);
    await nest.init();
    const express = createExpressApp(settings);
    servers.push({ name: 'nest', server: () => nest.getHttpServer() as Parameters<typeof request>[0] });
    servers.push({ name: 'express', server: () => express });
  });

  it.each(['nest', 'express'])('%s: public, authorized, placeholder and self-authorized routes', async (name) => {
    const app = servers.find((s) => s.name === name)!.server();
    fake.service.accept(BEARER, USER, [
      'u-1.orders.read.*',
      'u-1.orders.read.o-1',
      'u-1.reports-eu.monthly.acme',
    ]);
    await request(app).get('/health').expect(200, { status: 'ok' });
    await request(app).get('/orders').expect(401);
    await request(app).get('/orders').set('Authorization', BEARER).expect(200);
    await request(app).get('/orders/o-1').set('Authorization', BEARER).expect(200, { id: 'o-1', readBy: 'u-1' });
    await request(app).delete('/orders/o-1').set('Authorization', BEARER).expect(403);
    await request(app).get('/reports?kind=monthly').set('Authorization', BEARER).set('X-Tenant', 'acme').expect(200);
    await request(app).get('/reports?kind=monthly').set('Authorization', BEARER).expect(403);
    await request(app).get('/reports?kind=monthly').set('Authorization', BEARER).set('X-Tenant', 'a.b').expect(403);
    await request(app).get('/profile').set('Authorization', BEARER).expect(200, { id: 'u-1', kind: 'Bearer', role: 'staff' });
    expect(fake.service.calls.filter((c) => c.path === 'check-permission').map((c) => c.permission)).toEqual([
      'u-1.orders.read.*',
      'u-1.orders.read.o-1',
      'u-1.orders.delete.o-1',
      'u-1.reports-eu.monthly.acme',
    ]);
  });
});
