import { Inject, Injectable } from '@nestjs/common';
import { and, asc, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { userTypes, type UserTypeRow } from '../database/schema';
import { deleteByIds, runListQuery, type ListPage, type ListRequest, type QuerySchema } from '../common/query';
import { toUserTypeResponse } from './user-type.mapper';

/** What `where`, `sort` and `select` may name on user types (the API field names). */
export const USER_TYPE_QUERY_SCHEMA: QuerySchema = {
  fields: {
    _id: { sql: sql`${userTypes.id}`, type: 'string', sortable: true },
    name: { sql: sql`${userTypes.name}`, type: 'string' },
    slug: { sql: sql`${userTypes.slug}`, type: 'string', sortable: true },
    description: { sql: sql`${userTypes.description}`, type: 'string' },
    properties: { sql: sql`${userTypes.properties}`, type: 'json' },
    allow_additional_properties: { sql: sql`${userTypes.allowAdditionalProperties}`, type: 'boolean' },
    membership_id: { sql: sql`${userTypes.membershipId}`, type: 'string' },
    'sys.created_at': { sql: sql`${userTypes.createdAt}`, type: 'timestamp', sortable: true },
    'sys.created_by': { sql: sql`${userTypes.createdBy}`, type: 'string' },
    'sys.modified_at': { sql: sql`${userTypes.modifiedAt}`, type: 'timestamp' },
    'sys.modified_by': { sql: sql`${userTypes.modifiedBy}`, type: 'string' },
  },
};

export type UserTypeChanges = Pick<
  typeof userTypes.$inferInsert,
  'name' | 'description' | 'properties' | 'allowAdditionalProperties' | 'modifiedAt' | 'modifiedBy'
>;

@Injectable()
export class UserTypeRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  private scope(membershipId: string) {
    return eq(userTypes.membershipId, membershipId);
  }

  async findById(membershipId: string, id: string, executor: Executor = this.database.db): Promise<UserTypeRow | undefined> {
    const [row] = await executor
      .select()
      .from(userTypes)
      .where(and(this.scope(membershipId), eq(userTypes.id, id)))
      .limit(1);
    return row;
  }

  async findBySlug(membershipId: string, slug: string, executor: Executor = this.database.db): Promise<UserTypeRow | undefined> {
    const [row] = await executor
      .select()
      .from(userTypes)
      .where(and(this.scope(membershipId), eq(userTypes.slug, slug)))
      .limit(1);
    return row;
  }

  list(membershipId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery<UserTypeRow>({
      executor: this.database.db,
      table: userTypes,
      idColumn: userTypes.id,
      scope: this.scope(membershipId),
      schema: USER_TYPE_QUERY_SCHEMA,
      request,
      defaultSort: sql`${asc(userTypes.createdAt)}, ${asc(userTypes.id)}`,
      toResponse: toUserTypeResponse,
    });
  }

  async insert(row: typeof userTypes.$inferInsert, executor: Executor = this.database.db): Promise<UserTypeRow> {
    const [created] = await executor.insert(userTypes).values(row).returning();
    return created;
  }

  async update(membershipId: string, id: string, changes: UserTypeChanges, executor: Executor = this.database.db): Promise<UserTypeRow | undefined> {
    const [updated] = await executor
      .update(userTypes)
      .set(changes)
      .where(and(this.scope(membershipId), eq(userTypes.id, id)))
      .returning();
    return updated;
  }

  deleteByIds(membershipId: string, ids: readonly string[], executor: Executor = this.database.db): Promise<UserTypeRow[]> {
    return deleteByIds<UserTypeRow>(executor, userTypes, userTypes.id, this.scope(membershipId), ids);
  }
}
