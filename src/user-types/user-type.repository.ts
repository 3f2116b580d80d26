import { Injectable } from '@nestjs/common';
import { userTypes, type UserTypeRow } from '../database/schema';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { membershipSysFields, namedResourceFields, querySchema } from '../common/query';
import { toUserTypeResponse } from './user-type.mapper';

/** What `where`, `sort` and `select` may name on user types (the API field names). */
export const USER_TYPE_QUERY_SCHEMA = querySchema(userTypes, [
  namedResourceFields(userTypes, { sortableId: true }),
  'properties', 'allowAdditionalProperties',
  membershipSysFields(userTypes),
]);

export type NewUserTypeRow = typeof userTypes.$inferInsert;
/** The fields a replace (PUT) writes; the slug is immutable. */
export type UserTypeChanges = Pick<NewUserTypeRow, 'name' | 'description' | 'properties' | 'allowAdditionalProperties' | 'modifiedAt' | 'modifiedBy'>;

@Injectable()
export class UserTypeRepository extends MembershipScopedRepository<UserTypeRow, NewUserTypeRow, UserTypeChanges> {
  protected override readonly resource = { table: userTypes, schema: USER_TYPE_QUERY_SCHEMA, toResponse: toUserTypeResponse };

  /** The name UserTypesService calls `replace` by; undefined when the row is gone. */
  update(membershipId: string, id: string, changes: UserTypeChanges): Promise<UserTypeRow | undefined> {
    return this.replace(membershipId, id, changes);
  }
}
