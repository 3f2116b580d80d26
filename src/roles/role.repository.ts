import { Inject, Injectable } from '@nestjs/common';
import { and, eq } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { roles, type RoleRow } from '../database/schema';

@Injectable()
export class RoleRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async findBySlug(membershipId: string, slug: string, executor: Executor = this.database.db): Promise<RoleRow | undefined> {
    const [row] = await executor
      .select()
      .from(roles)
      .where(and(eq(roles.membershipId, membershipId), eq(roles.slug, slug)))
      .limit(1);
    return row;
  }

  async insert(executor: Executor, row: typeof roles.$inferInsert): Promise<RoleRow> {
    const [created] = await executor.insert(roles).values(row).returning();
    return created;
  }
}
