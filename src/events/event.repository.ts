import { Inject, Injectable } from '@nestjs/common';
import { DATABASE, type Database, type Executor } from '../database/database';
import { events, type EventRow } from '../database/schema';

@Injectable()
export class EventRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async insert(executor: Executor, rows: EventRow[]): Promise<void> {
    if (rows.length) await executor.insert(events).values(rows);
  }

  get db(): Executor {
    return this.database.db;
  }
}
