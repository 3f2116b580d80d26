import { Inject, Injectable } from '@nestjs/common';
import { and, eq, or, sql } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { users, type UserRow } from '../database/schema';

@Injectable()
export class UserRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async findById(membershipId: string, id: string, executor: Executor = this.database.db): Promise<UserRow | undefined> {
    const [row] = await executor
      .select()
      .from(users)
      .where(and(eq(users.membershipId, membershipId), eq(users.id, id)))
      .limit(1);
    return row;
  }

  /** Sign-in accepts the username (case-insensitive) or the e-mail address. */
  async findByLogin(membershipId: string, login: string, executor: Executor = this.database.db): Promise<UserRow | undefined> {
    const lowered = login.toLowerCase();
    const [row] = await executor
      .select()
      .from(users)
      .where(
        and(
          eq(users.membershipId, membershipId),
          or(sql`lower(${users.username}) = ${lowered}`, eq(users.emailAddress, lowered)),
        ),
      )
      .limit(1);
    return row;
  }

  async insert(executor: Executor, row: typeof users.$inferInsert): Promise<UserRow> {
    const [created] = await executor.insert(users).values(row).returning();
    return created;
  }
}
