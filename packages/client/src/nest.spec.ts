import { Controller, Get, type INestApplication, Module, Param, Req, UseGuards } from '@nestjs/common';
import { NestFactory, Reflector } from '@nestjs/core';
import request from 'supertest';
import { PortcullisClient, type PortcullisPrincipal } from './client';
import { PortcullisConfigError } from './errors';
import { CompiledPermission } from './expression';
import {
  Authorized,
  Permission,
  PortcullisCaller,
  PortcullisGuard,
  PortcullisModule,
  resolveEndpointRule,
  SelfAuthorized,
  Unauthorized,
} from './nest';
import type { PortcullisRequest } from './request';
import { useFakeService } from './testing/use-fake-service';

type Handler = (...args: never[]) => unknown;

/** The rule of `Class.method` as the guard resolves it, with the permission as a plain template. */
function ruleOf(controller: new () => object, method: string): unknown {
  const handler = (controller.prototype as Record<string, Handler>)[method];
  if (handler === undefined) throw new Error(`no ${method}`);
  const rule = resolveEndpointRule(handler, controller, new Reflector());
  return rule.mode === 'authorized' && rule.permission instanceof CompiledPermission
    ? { mode: rule.mode, permission: rule.permission.template }
    : rule;
}

describe('decorator precedence', () => {
  it('treats an undecorated endpoint as public, whatever its permission attributes', () => {
    @Permission({ resource: 'orders' })
    class Plain {
      @Permission({ action: 'read' })
      list(): void {}
      other(): void {}
    }
    expect(ruleOf(Plain, 'list')).toEqual({ mode: 'unauthorized' });
    expect(ruleOf(Plain, 'other')).toEqual({ mode: 'unauthorized' });
  });

  it('applies the controller mode to every handler without its own', () => {
    @Authorized({ resource: 'orders' })
    class Orders {
      list(): void {}
      @Unauthorized() health(): void {}
      @SelfAuthorized() mine(): void {}
    }
    expect(ruleOf(Orders, 'list')).toEqual({ mode: 'authorized', permission: { resource: 'orders' } });
    expect(ruleOf(Orders, 'health')).toEqual({ mode: 'unauthorized' });
    expect(ruleOf(Orders, 'mine')).toEqual({ mode: 'self-authorized' });
  });

  it('lets a handler be authorized inside a public or self-authorized controller', () => {
    @Unauthorized()
    class Public {
      @Authorized({ action: 'delete' }) remove(): void {}
    }
    @SelfAuthorized()
    class Self {
      @Authorized() strict(): void {}
      loose(): void {}
    }
    expect(ruleOf(Public, 'remove')).toEqual({ mode: 'authorized', permission: { action: 'delete' } });
    expect(ruleOf(Self, 'strict')).toEqual({ mode: 'authorized', permission: {} });
    expect(ruleOf(Self, 'loose')).toEqual({ mode: 'self-authorized' });
  });

  it('merges permission segments, the handler over the controller', () => {
    @Authorized({ resource: 'orders', action: 'read' })
    @Permission({ object: '{id}' })
    class Orders {
      get(): void {}
      @Permission({ action: 'update' }) update(): void {}
      @Authorized({ object: '*', subject: '*' }) audit(): void {}
    }
    expect(ruleOf(Orders, 'get')).toEqual({
      mode: 'authorized',
      permission: { resource: 'orders', action: 'read', object: '{id}' },
    });
    expect(ruleOf(Orders, 'update')).toEqual({
      mode: 'authorized',
      permission: { resource: 'orders', action: 'update', object: '{id}' },
    });
    expect(ruleOf(Orders, 'audit')).toEqual({
      mode: 'authorized',
      permission: { resource: 'orders', action: 'read', object: '*', subject: '*' },
    });
  });

  it('inherits the controller declaration of a parent class', () => {
    @Authorized({ resource: 'base' })
    class Base {
      list(): void {}
    }
    class Derived extends Base {}
    expect(ruleOf(Derived, 'list')).toEqual({ mode: 'authorized', permission: { resource: 'base' } });
  });

  it('refuses conflicting declarations at the same level at decoration time', () => {
    expect(() => {
      class Conflict {
        @Authorized() @Unauthorized() both(): void {}
      }
      return Conflict;
    }).toThrow(PortcullisConfigError);
    expect(() => {
      @Authorized({ action: 'read' })
      @Permission({ action: 'write' })
      class Twice {}
      return Twice;
    }).toThrow(/declared twice/);
  });

  it('refuses a subject read from query or header when the decorator is created', () => {
    expect(() => Authorized({ subject: '{query::user}' })).toThrow(PortcullisConfigError);
    expect(() => Permission({ subject: '{header::x-user}' })).toThrow(PortcullisConfigError);
    expect(() => Permission({ resource: 'a.b' })).toThrow(PortcullisConfigError);
  });
});

const MEMBERSHIP = 'm-1';
const BEARER = 'Bearer nest-user';
const USER = { _id: 'u-1', username: 'alice', membership_id: MEMBERSHIP };

@Controller('orders')
@Authorized({ action: 'read' })
class OrdersController {
  @Get()
  list(): string[] {
    return ['o-1'];
  }

  @Get(':orderId')
  @Permission({ object: '{orderId}' })
  get(@Param('orderId') orderId: string): { id: string } {
    return { id: orderId };
  }

  @Get('public/ping')
  @Unauthorized()
  ping(): string {
    return 'pong';
  }
}

@Controller('me')
class MeController {
  @Get()
  @SelfAuthorized()
  me(@Req() req: PortcullisRequest, @PortcullisCaller() caller: PortcullisPrincipal | undefined): unknown {
    return { fromRequest: req.portcullis?.identity._id, fromDecorator: caller?.tokenKind };
  }

  @Get('open')
  @Permission({ resource: 'ignored' })
  open(): string {
    return 'open';
  }
}

@Controller('local')
@UseGuards(PortcullisGuard)
class LocalController {
  @Get(':id')
  @Authorized({ resource: 'things', object: '{id}' })
  get(@Param('id') id: string): string {
    return id;
  }
}

describe('PortcullisGuard in a Nest application', () => {
  let app: INestApplication;
  let localApp: INestApplication;
  const fake = useFakeService('/', async () => {
    await app.close();
    await localApp.close();
  });

  beforeAll(async () => {

    @Module({
      imports: [PortcullisModule.forRoot({ BaseUrl: fake.service.baseUrl, MembershipId: MEMBERSHIP })],
      controllers: [OrdersController, MeController],
    })
    class GlobalGuardModule {}
    app = await NestFactory.create(GlobalGuardModule, { logger: false });
    app.setGlobalPrefix('api');
    await app.init();

    @Module({
      imports: [PortcullisModule.forRoot({ BaseUrl: fake.service.baseUrl, MembershipId: MEMBERSHIP }, { globalGuard: false })],
      controllers: [LocalController, OrdersController],
    })
    class LocalGuardModule {}
    localApp = await NestFactory.create(LocalGuardModule, { logger: false });
    await localApp.init();
  });

  it('answers 401 with the error body and WWW-Authenticate without a token', async () => {
    const res = await request(app.getHttpServer()).get('/api/orders').expect(401);
    expect(res.body).toEqual({
      statusCode: 401,
      errorCode: 'InvalidToken',
      message: expect.stringContaining('Authorization header is missing') as unknown,
    });
    expect(res.headers['www-authenticate']).toBe('Bearer realm="portcullis"');
    expect(fake.service.calls).toHaveLength(0);
  });

  it('passes the service 401 on', async () => {
    fake.service.revoke(BEARER, 'TokenWasExpired', 'The token expired.');
    const res = await request(app.getHttpServer()).get('/api/orders').set('Authorization', BEARER).expect(401);
    expect(res.body).toEqual({ statusCode: 401, errorCode: 'TokenWasExpired', message: 'The token expired.' });
    expect(res.headers['www-authenticate']).toContain('Bearer');
  });

  it('builds the expression from the global route template and the params', async () => {
    fake.service.accept(BEARER, USER, ['u-1.orders.read.*', 'u-1.orders.read.o-7']);
    await request(app.getHttpServer()).get('/api/orders').set('Authorization', BEARER).expect(200, ['o-1']);
    await request(app.getHttpServer()).get('/api/orders/o-7').set('Authorization', BEARER).expect(200, { id: 'o-7' });
    expect(fake.service.calls.filter((c) => c.path === 'check-permission').map((c) => c.permission)).toEqual([
      'u-1.orders.read.*',
      'u-1.orders.read.o-7',
    ]);
  });

  it('answers 403 AccessDenied with the exact body', async () => {
    fake.service.accept(BEARER, USER, []);
    const res = await request(app.getHttpServer()).get('/api/orders/o-8').set('Authorization', BEARER).expect(403);
    expect(res.body).toEqual({ statusCode: 403, errorCode: 'AccessDenied', message: expect.any(String) as unknown });
  });

  it('answers 503 when the service fails', async () => {
    fake.service.accept(BEARER, USER, ['u-1.orders.read.*']);
    fake.service.whoami = 'error500';
    const res = await request(app.getHttpServer()).get('/api/orders').set('Authorization', BEARER).expect(503);
    expect(res.body).toEqual({
      statusCode: 503,
      errorCode: 'AuthenticationServiceUnavailable',
      message: expect.any(String) as unknown,
    });
    expect(res.headers['retry-after']).toBe('1');
  });

  it('lets public endpoints through without calling the service', async () => {
    await request(app.getHttpServer()).get('/api/orders/public/ping').expect(200, 'pong');
    await request(app.getHttpServer()).get('/api/me/open').expect(200, 'open');
    expect(fake.service.calls).toHaveLength(0);
  });

  it('attaches the verified caller for self-authorized handlers', async () => {
    fake.service.accept(BEARER, USER);
    await request(app.getHttpServer()).get('/api/me').set('Authorization', BEARER)
      .expect(200, { fromRequest: 'u-1', fromDecorator: 'Bearer' });
    expect(fake.service.count('check-permission')).toBe(0);
  });

  it('works as a local guard (@UseGuards) and leaves other controllers alone', async () => {
    fake.service.accept(BEARER, USER, ['u-1.things.*.t-1']);
    await request(localApp.getHttpServer()).get('/local/t-1').set('Authorization', BEARER).expect(200, 't-1');
    await request(localApp.getHttpServer()).get('/local/t-2').set('Authorization', BEARER).expect(403);
    // No global guard in this application: OrdersController is not enforced here.
    await request(localApp.getHttpServer()).get('/orders').expect(200);
  });

  it('can be constructed directly', async () => {
    const client = new PortcullisClient({ BaseUrl: fake.service.baseUrl, MembershipId: MEMBERSHIP });
    const guard = new PortcullisGuard(client, new Reflector());
    expect(guard).toBeInstanceOf(PortcullisGuard);
    client.close();
  });
});
