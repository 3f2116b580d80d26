import { Inject, Injectable } from '@nestjs/common';
import { and, eq } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { applications, type ApplicationRow } from '../database/schema';

@Injectable()
export class ApplicationRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  /** By id alone: Basic tokens name only the application, and ids are unique across memberships. */
  async findAnyById(id: string, executor: Executor = this.database.db): Promise<ApplicationRow | undefined> {
    const [row] = await executor.select().from(applications).where(eq(applications.id, id)).limit(1);
    return row;
  }

  async findById(membershipId: string, id: string, executor: Executor = this.database.db): Promise<ApplicationRow | undefined> {
    const [row] = await executor
      .select()
      .from(applications)
      .where(and(eq(applications.membershipId, membershipId), eq(applications.id, id)))
      .limit(1);
    return row;
  }

  async insert(executor: Executor, row: typeof applications.$inferInsert): Promise<ApplicationRow> {
    const [created] = await executor.insert(applications).values(row).returning();
    return created;
  }
}
