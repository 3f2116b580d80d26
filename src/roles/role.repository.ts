import { Injectable } from '@nestjs/common';
import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import { applications, roles, users, type RoleRow } from '../database/schema';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { membershipSysFields, namedResourceFields, querySchema, sortableFieldNames } from '../common/query';
import { toRoleResponse } from './role.mapper';

/** Its home is common/query now; exported here still for the callers that import it from roles. */
export { likePattern } from '../common/query';

export const ROLE_QUERY_SCHEMA = querySchema(
  roles,
  [namedResourceFields(roles, { sortableId: true }), 'permissions', 'forbidden', membershipSysFields(roles)],
  { stringArrays: ['permissions', 'forbidden'] },
);

export const ROLE_SORTABLE_FIELDS = sortableFieldNames(ROLE_QUERY_SCHEMA);

export type NewRoleRow = typeof roles.$inferInsert;
/** The fields a PUT replaces. */
export type RoleContent = Pick<RoleRow, 'name' | 'description' | 'permissions' | 'forbidden'>;
/** What a replace writes: the content and who changed it when. */
export type RoleChanges = RoleContent & Pick<RoleRow, 'modifiedAt' | 'modifiedBy'>;

@Injectable()
export class RoleRepository extends MembershipScopedRepository<RoleRow, NewRoleRow, RoleChanges> {
  protected override readonly resource = { table: roles, schema: ROLE_QUERY_SCHEMA, toResponse: toRoleResponse };

  async findByIds(membershipId: string, ids: readonly string[]): Promise<RoleRow[]> {
    if (!ids.length) return [];
    return this.findWhere(membershipId, [inArray(roles.id, [...ids])]);
  }

  /**
   * The distinct own permission lists of the users and applications that name one of these role
   * slugs, each with the slug (empty lists left out): what deleting a role's forbidden entries
   * would let through. Reads the users and applications tables, as the statement that asks this
   * of a role belongs with the role.
   */
  async ownPermissionsOfHolders(membershipId: string, slugs: readonly string[]): Promise<{ role: string; permissions: string[] }[]> {
    if (!slugs.length) return [];
    const of = (table: typeof users | typeof applications) =>
      this.database.db
        .selectDistinct({ role: sql<string>`${table.role}`, permissions: table.permissions })
        .from(table)
        .where(and(eq(table.membershipId, membershipId), inArray(table.role, [...slugs]), ne(table.permissions, sql`'[]'::jsonb`)));
    return [...(await of(users)), ...(await of(applications))];
  }

  /** Replaces the content, stamped as modified now by `modifiedBy`. */
  update(membershipId: string, id: string, content: RoleContent, modifiedBy: string): Promise<RoleRow> {
    return this.replace(membershipId, id, { ...content, modifiedAt: new Date(), modifiedBy });
  }
}
