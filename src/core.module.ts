import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from './config/config';
import { LOGGER } from './common/logger';
import { DATABASE, type Database, openDatabase } from './database/database';
import { ExpirySweeper } from './database/expiry-sweeper';

/** Closes the database last, after every other module has stopped using it. */
class DatabaseCloser implements OnApplicationShutdown {
  constructor(@Inject(DATABASE) private readonly database: Database) {}
  async onApplicationShutdown(): Promise<void> {
    await this.database.close();
  }
}

/**
 * Infrastructure every feature uses: configuration, logger, database. One of the three global
 * modules (with QueueModule and MetricsModule); everything else is imported where it is used.
 * Caches are BoundedCache instances owned by their feature.
 */
@Global()
@Module({})
export class CoreModule {
  static forRoot(config: AppConfig, logger: Logger): DynamicModule {
    return {
      module: CoreModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: LOGGER, useValue: logger },
        { provide: DATABASE, useFactory: () => openDatabase(config.database) },
        { provide: DatabaseCloser, useClass: DatabaseCloser },
        ExpirySweeper,
      ],
      exports: [APP_CONFIG, LOGGER, DATABASE, ExpirySweeper],
    };
  }
}
