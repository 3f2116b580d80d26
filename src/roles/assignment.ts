import { type Assignment, assertHoldsGrants, grantedByAssignment, type Granter } from '../permissions';
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

/**
 * Taking over a principal's credentials gives the caller everything the principal holds: setting
 * another user's password or e-mail address (a reset mail then goes where the caller says),
 * removing its second factors, rotating an application's secret and reading the new one. So it
 * counts as granting the principal's role and permissions, as assigning them would (contract
 * "Grants": a caller grants only what it holds); else `users.update` alone would take over an
 * admin, and `applications.update` the admin application.
 */
export async function assertMayTakeOver(granter: Granter, roles: RoleRepository, membershipId: string, principal: AssignmentFields): Promise<void> {
  assertHoldsGrants(granter, grantedByAssignment(null, await loadAssignment(roles, membershipId, principal)));
}
