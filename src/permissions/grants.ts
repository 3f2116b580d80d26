import { DomainError } from '../common/errors';
import type { PermissionHolder } from './decide';
import { escapePermissionSegment, PermissionExpression, type PermissionSegments, segmentsCover, WILDCARD } from './permission-expression';

/** Whether two expressions share at least one concrete request: in each segment one side is `*` or both are equal. */
export function segmentsOverlap(a: PermissionSegments, b: PermissionSegments): boolean {
  const meet = (x: string, y: string): boolean => x === WILDCARD || y === WILDCARD || x === y;
  return meet(a.subject, b.subject) && meet(a.resource, b.resource) && meet(a.action, b.action) && meet(a.object, b.object);
}

/** Who grants: its permissions, and the resources it may grant without holding them. */
export interface Granter {
  holder: PermissionHolder;
  /**
   * Resources (never `*`) it may grant without a permission covering them, still within its
   * forbidden entries and scopes. The service sets this for the membership's admin role, whose
   * "every resource" reaches the resources of third-party APIs (checked through the client
   * library), which no role of the service can list.
   */
  grantsUnheld?: (resource: string) => boolean;
}

/**
 * Whether `granter` may grant `granted` to a user, role or application: whatever the grantee could
 * then do, the holder must be able to do itself. So, read for the holder (the granted subject names
 * the grantee, not the granter):
 * - some role or own permission covers it (wildcard-aware: `users.read` covers `users.read.abc`,
 *   not `users.*`), or its resource is one the granter `grantsUnheld`;
 * - no forbidden entry of the holder overlaps it: the effective permissions are the permissions
 *   minus the forbidden ones, so `users.read` is not held by a holder denied `users.read.x1`;
 * - a scoped token's scopes cover it (scopes never grant, so they never let a holder grant either).
 * The own-record rule is about one's own record, not a permission: it never makes a grant held.
 */
export function holdsGrant(granter: Granter, granted: PermissionSegments): boolean {
  const { holder } = granter;
  const self = escapePermissionSegment(holder.id);
  const asHolder: PermissionSegments = { ...segmentsOf(granted), subject: self };
  const forbidden = [...holder.ownForbidden, ...holder.roleForbidden];
  if (forbidden.some((entry) => segmentsOverlap(entry, asHolder))) return false;
  const permissions = [...holder.rolePermissions, ...holder.ownPermissions];
  const grantsUnheld = granted.resource !== WILDCARD && (granter.grantsUnheld?.(granted.resource) ?? false);
  if (!grantsUnheld && !permissions.some((have) => segmentsCover(have, asHolder))) return false;
  const scopes = holder.scopes;
  if (scopes == null) return true;
  // A scope's subject `*` stands for the holder itself.
  return scopes.some((scope) => segmentsCover(scope.subject === WILDCARD ? { ...segmentsOf(scope), subject: self } : scope, asHolder));
}

/** The requests two overlapping expressions share (in each segment the literal side, or `*` when both are). */
export function segmentsMeet(a: PermissionSegments, b: PermissionSegments): PermissionExpression {
  const meet = (x: string, y: string): string => (x === WILDCARD ? y : x);
  return PermissionExpression.of({
    subject: meet(a.subject, b.subject),
    resource: meet(a.resource, b.resource),
    action: meet(a.action, b.action),
    object: meet(a.object, b.object),
  });
}

function segmentsOf(e: PermissionSegments): PermissionSegments {
  return { subject: e.subject, resource: e.resource, action: e.action, object: e.object };
}

/** What a grantee holds, as far as a write can change it. */
export interface GrantedLists {
  /** Own permissions and, where the grantee has a role, the role's. */
  permissions: readonly PermissionExpression[];
  /** Own forbidden entries and, where the grantee has a role, the role's. */
  forbidden: readonly PermissionExpression[];
}

/**
 * What a write grants: each permission the grantee did not have before, and each forbidden entry
 * it had before and has no more (removing a denial grants what it denied). Removing permissions and
 * adding forbidden entries grant nothing. `before` is null for a create. Expressions compare in
 * normalized form, so reordering or respelling a list grants nothing.
 */
export function grantedBy(before: GrantedLists | null, after: GrantedLists): PermissionExpression[] {
  const had = new Set((before?.permissions ?? []).map(String));
  const stillForbidden = new Set(after.forbidden.map(String));
  const granted = new Map<string, PermissionExpression>();
  for (const permission of after.permissions) if (!had.has(permission.toString())) granted.set(permission.toString(), permission);
  for (const entry of before?.forbidden ?? []) if (!stillForbidden.has(entry.toString())) granted.set(entry.toString(), entry);
  return [...granted.values()];
}

/** 403 AccessDenied naming the first granted expression the holder does not hold itself. */
export function assertHoldsGrants(granter: Granter, granted: readonly PermissionExpression[]): void {
  const missing = granted.find((expression) => !holdsGrant(granter, expression));
  if (missing) {
    throw new DomainError('AccessDenied', `Granting ${missing.toString()} needs it among the caller's own effective permissions`);
  }
}

/** What a user or an application holds through a write: its own lists and its role's. */
export interface Assignment {
  role: { slug: string; permissions: readonly PermissionExpression[]; forbidden: readonly PermissionExpression[] } | null;
  permissions: readonly PermissionExpression[];
  forbidden: readonly PermissionExpression[];
}

/**
 * What a write of a user or an application grants. Assigning a role grants each of its
 * permissions (even those the grantee already had another way); keeping the role grants none of
 * them. Forbidden entries the grantee loses, its own or its former role's, grant what they denied.
 */
export function grantedByAssignment(before: Assignment | null, after: Assignment): PermissionExpression[] {
  const sameRole = before !== null && before.role?.slug === after.role?.slug;
  const keptRolePermissions = sameRole ? (after.role?.permissions ?? []) : [];
  const changes = grantedBy(
    before && {
      permissions: [...before.permissions, ...keptRolePermissions],
      forbidden: [...before.forbidden, ...(before.role?.forbidden ?? [])],
    },
    {
      permissions: [...after.permissions, ...keptRolePermissions],
      forbidden: [...after.forbidden, ...(after.role?.forbidden ?? [])],
    },
  );
  const assigned = sameRole ? [] : (after.role?.permissions ?? []);
  return [...new Map([...assigned, ...changes].map((expression) => [expression.toString(), expression])).values()];
}
