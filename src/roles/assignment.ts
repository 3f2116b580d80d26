import type { Assignment } from '../permissions';
import { parseStored } from './role-cache';
import type { RoleRepository } from './role.repository';

/** What a user or an application names: its role's slug and its own lists, as stored or as written. */
export interface AssignmentFields {
  role: string | null;
  permissions: readonly string[];
  forbidden: readonly string[];
}

/**
 * The grants of a user or an application with its role read from the database (in the open
 * transaction, when there is one; never from the role cache), for `grantedByAssignment`. A role that no longer exists
 * grants and denies nothing.
 */
export async function loadAssignment(roles: RoleRepository, membershipId: string, fields: AssignmentFields): Promise<Assignment> {
  const role = fields.role === null ? undefined : await roles.findBySlug(membershipId, fields.role);
  return {
    role: role ? { slug: role.slug, permissions: parseStored(role.permissions), forbidden: parseStored(role.forbidden) } : null,
    permissions: parseStored(fields.permissions),
    forbidden: parseStored(fields.forbidden),
  };
}
