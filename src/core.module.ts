import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from './config/config';
import { LOGGER } from './common/logger';
import { ClsModule } from 'nestjs-cls';
import { ClsPluginTransactional } from '@nestjs-cls/transactional';
import { DATABASE, type Database, openDatabase } from './database/database';
import { ambientDatabase, DrizzleAdapter, DRIZZLE_CLIENT, RequestTransaction } from './common/request-transaction';
import { ExpirySweeper } from './database/expiry-sweeper';
import { EventRecorder } from './events/event-recorder';
import { EventRepository } from './events/event.repository';
import { PasswordHasher } from './users/password-hasher';
import { JwtCodec } from './tokens/jwt-codec';

/** The database as opened; everything else injects DATABASE, which joins the request transaction. */
const OPENED_DATABASE = Symbol('OPENED_DATABASE');

/** Closes the database last, after every other module has stopped using it. */
class DatabaseCloser implements OnApplicationShutdown {
  constructor(@Inject(DATABASE) private readonly database: Database) {}
  async onApplicationShutdown(): Promise<void> {
    await this.database.close();
  }
}

/** Infrastructure every feature uses: configuration, logger, database and the request transaction, event recorder. Caches are BoundedCache instances owned by their feature. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: CoreModule,
      imports: [
        // Global: the transactional plugin's TransactionHost must reach RequestTransaction here.
        ClsModule.forRoot({
          global: true,
          plugins: [new ClsPluginTransactional({ adapter: new DrizzleAdapter() })],
        }),
      ],
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: OPENED_DATABASE, useFactory: () => openDatabase(config.database) },
        { provide: DRIZZLE_CLIENT, useFactory: (database: Database) => database.db, inject: [OPENED_DATABASE] },
        RequestTransaction,
        { provide: DATABASE, useFactory: ambientDatabase, inject: [OPENED_DATABASE, RequestTransaction] },
        { provide: DatabaseCloser, useClass: DatabaseCloser },
        ExpirySweeper,
        EventRepository,
        EventRecorder,
        PasswordHasher,
        { provide: JwtCodec, useValue: new JwtCodec() },
      ],
      exports: [APP_CONFIG, LOGGER, DATABASE, DRIZZLE_CLIENT, RequestTransaction, ExpirySweeper, EventRepository, EventRecorder, PasswordHasher, JwtCodec],
    };
  }
}
