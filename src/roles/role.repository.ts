import { Inject, Injectable } from '@nestjs/common';
import { and, eq, ilike, inArray, or, sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { roles, type RoleRow } from '../database/schema';
import { deleteByIds, runListQuery, type ListPage, type ListRequest, type QuerySchema } from '../common/query';

export const ROLE_QUERY_SCHEMA: QuerySchema = {
  fields: {
    _id: { sql: sql`${roles.id}`, type: 'string', sortable: true },
    name: { sql: sql`${roles.name}`, type: 'string' },
    slug: { sql: sql`${roles.slug}`, type: 'string', sortable: true },
    description: { sql: sql`${roles.description}`, type: 'string' },
    permissions: { sql: sql`${roles.permissions}`, type: 'string_array' },
    forbidden: { sql: sql`${roles.forbidden}`, type: 'string_array' },
    membership_id: { sql: sql`${roles.membershipId}`, type: 'string' },
    'sys.created_at': { sql: sql`${roles.createdAt}`, type: 'timestamp', sortable: true },
    'sys.created_by': { sql: sql`${roles.createdBy}`, type: 'string' },
    'sys.modified_at': { sql: sql`${roles.modifiedAt}`, type: 'timestamp' },
    'sys.modified_by': { sql: sql`${roles.modifiedBy}`, type: 'string' },
  },
};

export const ROLE_SORTABLE_FIELDS = '_id, slug, sys.created_at';

/** The fields a PUT replaces. */
export type RoleContent = Pick<RoleRow, 'name' | 'description' | 'permissions' | 'forbidden'>;

/** `%`, `_` and `\` are LIKE syntax; a keyword is matched literally. */
export function likePattern(keyword: string): string {
  return `%${keyword.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

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

  async findById(membershipId: string, id: string, executor: Executor = this.database.db): Promise<RoleRow | undefined> {
    const [row] = await executor
      .select()
      .from(roles)
      .where(and(eq(roles.membershipId, membershipId), eq(roles.id, id)))
      .limit(1);
    return row;
  }

  /** Locks the row until the transaction ends, so concurrent updates of one role are serialized. */
  async lockById(membershipId: string, id: string, executor: Executor = this.database.db): Promise<RoleRow | undefined> {
    const [row] = await executor
      .select()
      .from(roles)
      .where(and(eq(roles.membershipId, membershipId), eq(roles.id, id)))
      .limit(1)
      .for('update');
    return row;
  }

  async findByIds(membershipId: string, ids: readonly string[], executor: Executor = this.database.db): Promise<RoleRow[]> {
    if (!ids.length) return [];
    return executor
      .select()
      .from(roles)
      .where(and(eq(roles.membershipId, membershipId), inArray(roles.id, [...ids])));
  }

  async insert(row: typeof roles.$inferInsert, executor: Executor = this.database.db): Promise<RoleRow> {
    const [created] = await executor.insert(roles).values(row).returning();
    return created;
  }

  async update(membershipId: string, id: string, content: RoleContent, modifiedBy: string, executor: Executor = this.database.db): Promise<RoleRow> {
    const [row] = await executor
      .update(roles)
      .set({ ...content, modifiedAt: new Date(), modifiedBy })
      .where(and(eq(roles.membershipId, membershipId), eq(roles.id, id)))
      .returning();
    return row;
  }

  async deleteByIds(membershipId: string, ids: readonly string[], executor: Executor = this.database.db): Promise<RoleRow[]> {
    return deleteByIds<RoleRow>(executor, roles, roles.id, eq(roles.membershipId, membershipId), ids);
  }

  /** List and `_query`; a keyword (search route) narrows to roles whose name, slug or description contain it. */
  list(
    membershipId: string,
    request: ListRequest,
    toResponse: (row: RoleRow) => object,
    keyword?: string,
  ): Promise<ListPage<Record<string, unknown>>> {
    let scope: SQL | undefined = eq(roles.membershipId, membershipId);
    if (keyword !== undefined) {
      const pattern = likePattern(keyword);
      scope = and(scope, or(ilike(roles.name, pattern), ilike(roles.slug, pattern), ilike(roles.description, pattern)));
    }
    return runListQuery<RoleRow>({
      executor: this.database.db,
      table: roles,
      idColumn: roles.id,
      scope: scope ?? sql`false`,
      schema: ROLE_QUERY_SCHEMA,
      request,
      defaultSort: sql`${roles.createdAt} asc, ${roles.id} asc`,
      toResponse,
    });
  }
}
