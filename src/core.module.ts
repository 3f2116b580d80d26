import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from './config/config';
import { LOGGER } from './common/logger';
import { ClsModule } from 'nestjs-cls';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { DATABASE, type Database, openDatabase, warnIfAutovacuumOff } from './database/database';
import { ambientDatabase, DrizzleAdapter, DRIZZLE_CLIENT, RequestTransaction } from './common/request-transaction';
import { ExpirySweeper } from './common/expiry-sweeper';

/** The database as opened; everything else injects DATABASE, which joins the request transaction. */
const OPENED_DATABASE = Symbol('OPENED_DATABASE');

/**
 * The CLS module without the global guard and interceptor nestjs-cls registers whatever its
 * options say. Unmounted (as here: a context is opened only by RequestTransaction, around a
 * transaction), they are a guard that returns true and an interceptor that passes the handler
 * through, on every route. The interceptor is the costly one: with any interceptor at all, Nest
 * runs each handler through RxJS (a ReplaySubject, an Observable and lastValueFrom per request);
 * /me spent 13 µs of its 330 in RxJS alone. nestjs-cls 6 and 7 both register them (cls-root.module.js,
 * `enhancerArr`); core.module.spec checks that no global enhancer of theirs is left.
 */
export function withoutGlobalEnhancers(module: DynamicModule): DynamicModule {
  const isEnhancer = (provider: Provider): boolean =>
    typeof provider === 'object' && 'provide' in provider && (provider.provide === APP_GUARD || provider.provide === APP_INTERCEPTOR);
  return {
    ...module,
    providers: module.providers?.filter((provider) => !isEnhancer(provider)),
    imports: module.imports?.map((imported) => (typeof imported === 'object' && 'module' in imported ? withoutGlobalEnhancers(imported) : imported)),
  };
}

/** Closes the database last, after every other module has stopped using it. */
class DatabaseCloser implements OnApplicationShutdown {
  constructor(@Inject(DATABASE) private readonly database: Database) {}
  async onApplicationShutdown(): Promise<void> {
    await this.database.close();
  }
}

/**
 * Infrastructure every feature uses: configuration, logger, database and the
 * request transaction (nestjs-cls) that repositories join through DATABASE. One of the three global
 * modules (with QueueModule and MetricsModule); everything else is imported where it is used.
 * Caches are BoundedCache instances owned by their feature.
 */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: CoreModule,
      imports: [
        // Global: the transactional plugin's TransactionHost must reach RequestTransaction here.
        withoutGlobalEnhancers(
          ClsModule.forRoot({
            global: true,
            plugins: [new ClsPluginTransactional({ adapter: new DrizzleAdapter() })],
          }),
        ),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: OPENED_DATABASE, useFactory: async () => warnIfAutovacuumOff(await openDatabase(config.database), logger) },
        { provide: DRIZZLE_CLIENT, useFactory: (database: Database) => database.db, inject: [OPENED_DATABASE] },
        RequestTransaction,
        { provide: DATABASE, useFactory: ambientDatabase, inject: [OPENED_DATABASE, RequestTransaction] },
        { provide: DatabaseCloser, useClass: DatabaseCloser },
        ExpirySweeper,
      ],
      exports: [APP_CONFIG, LOGGER, DATABASE, DRIZZLE_CLIENT, RequestTransaction, ExpirySweeper],
    };
  }
}
