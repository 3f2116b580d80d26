/**
 * A third-party NestJS API protected by Portcullis: every mode and each placeholder source.
 *
 *   PORTCULLIS_URL=http://localhost:3000/ PORTCULLIS_MEMBERSHIP_ID=<membership id> \
 *     PORT=4000 npx tsx --tsconfig examples/protected-api/tsconfig.json examples/protected-api/nest-app.ts
 *
 * Listens on HOST (default 127.0.0.1: a development example stays off the network unless asked).
 *
 * It imports the client package by name, as a real API does; in this repository the name resolves to
 * packages/client/src (tsconfig.json "paths"), so the example runs without a build.
 */
import {
  Controller,
  Delete,
  type DynamicModule,
  Get,
  HttpCode,
  type INestApplication,
  Module,
  Param,
  Query,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Authorized,
  Permission,
  PortcullisCaller,
  PortcullisModule,
  type PortcullisPrincipal,
  type PortcullisSettings,
  SelfAuthorized,
  Unauthorized,
} from '@portcullis/client/nest';

/** Public: no decorator at all (Unauthorized is the default), or @Unauthorized() to be explicit. */
@Controller('health')
class HealthController {
  @Get()
  @Unauthorized()
  health(): { status: string } {
    return { status: 'ok' };
  }
}

/**
 * Every handler needs `<caller id>.orders.read.<object>` unless it says otherwise: the resource
 * comes from the route (`/orders...`), the action from the controller, the object per handler.
 */
@Controller('orders')
@Authorized({ action: 'read' })
class OrdersController {
  /** `<caller>.orders.read.*` */
  @Get()
  list(): Array<{ id: string }> {
    return [{ id: 'o-1' }, { id: 'o-2' }];
  }

  /** `<caller>.orders.read.<orderId>` */
  @Get(':orderId')
  @Permission({ object: '{orderId}' })
  get(@Param('orderId') orderId: string, @PortcullisCaller() caller?: PortcullisPrincipal): unknown {
    return { id: orderId, readBy: caller?.identity._id };
  }

  /** `<caller>.orders.delete.<orderId>` */
  @Delete(':orderId')
  @HttpCode(204)
  @Permission({ action: 'delete', object: '{route::orderId}' })
  remove(@Param('orderId') _orderId: string): void {}
}

/**
 * Query, header and env placeholders. The region comes from the API's own environment
 * (`REGION`, e.g. `eu`); the tenant from a header; the report kind from the query string.
 */
@Controller('reports')
@Authorized({ resource: 'reports-{env::REGION}', action: '{query::kind}', object: '{header::X-Tenant}' })
class ReportsController {
  /** `<caller>.reports-eu.<?kind>.<X-Tenant>`: missing kind or tenant, or a hostile value: 403. */
  @Get()
  list(@Query('kind') kind: string): unknown {
    return { kind, rows: [] };
  }
}

/** Token only: the handler decides with the verified caller. */
@Controller('profile')
@SelfAuthorized()
class ProfileController {
  @Get()
  me(@PortcullisCaller() caller: PortcullisPrincipal): unknown {
    return { id: caller.identity._id, kind: caller.tokenKind, role: caller.identity.role ?? null };
  }
}

@Module({
  controllers: [HealthController, OrdersController, ReportsController, ProfileController],
})
class ProtectedApiModule {
  static forRoot(settings: PortcullisSettings): DynamicModule {
    // forRoot registers the guard globally; undecorated routes stay public.
    return { module: ProtectedApiModule, imports: [PortcullisModule.forRoot(settings)] };
  }
}

/** Builds the application (not listening yet). */
export async function createApp(settings: PortcullisSettings): Promise<INestApplication> {
  const app = await NestFactory.create(ProtectedApiModule.forRoot(settings), { logger: ['error', 'warn'] });
  app.enableShutdownHooks();
  return app;
}

export async function main(): Promise<void> {
  const app = await createApp({
    BaseUrl: process.env['PORTCULLIS_URL'] ?? '',
    MembershipId: process.env['PORTCULLIS_MEMBERSHIP_ID'] ?? '',
    BasicTokenCacheTTL: Number(process.env['PORTCULLIS_BASIC_CACHE_TTL'] ?? 0),
    // With both set, answers are kept per token and dropped by the live event stream (a revocation reaches this API within a second).
    CacheTTL: Number(process.env['PORTCULLIS_CACHE_TTL'] ?? 0),
    StreamCredentials: process.env['PORTCULLIS_STREAM_CREDENTIALS'] || undefined,
  });
  const host = process.env['HOST'] ?? '127.0.0.1';
  const port = Number(process.env['PORT'] ?? 4000);
  await app.listen(port, host);
  const bound = (app.getHttpServer() as Server).address() as AddressInfo;
  console.log(`Protected Nest API on http://${bound.address}:${bound.port}`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
