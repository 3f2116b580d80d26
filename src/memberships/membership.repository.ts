import { Inject, Injectable } from '@nestjs/common';
import { eq, sql } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { memberships, type MembershipRow } from '../database/schema';

@Injectable()
export class MembershipRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async findById(id: string, executor: Executor = this.database.db): Promise<MembershipRow | undefined> {
    const [row] = await executor.select().from(memberships).where(eq(memberships.id, id)).limit(1);
    return row;
  }

  async anyExists(executor: Executor = this.database.db): Promise<boolean> {
    const rows = await executor.select({ one: sql<number>`1` }).from(memberships).limit(1);
    return rows.length > 0;
  }

  async insert(executor: Executor, row: typeof memberships.$inferInsert): Promise<MembershipRow> {
    const [created] = await executor.insert(memberships).values(row).returning();
    return created;
  }
}
