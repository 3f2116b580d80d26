import type { Decision, DecisionReason } from '../common/access-decision';
import { PermissionExpression, PermissionSegments, WILDCARD, segmentsCover } from './permission-expression';

export type { Decision, DecisionReason } from '../common/access-decision';

export interface PermissionHolder {
  id: string;
  kind: 'user' | 'application';
  ownPermissions: readonly PermissionExpression[];
  ownForbidden: readonly PermissionExpression[];
  /** Empty when the caller has no role. */
  rolePermissions: readonly PermissionExpression[];
  /** Empty when the caller has no role. */
  roleForbidden: readonly PermissionExpression[];
  /** Present only for scoped tokens. A non-null array (even an empty one) limits every decision. */
  scopes?: readonly PermissionExpression[] | null;
}

/** Actions a user may perform on its own record (`<id>.users.<action>.<id>`) without holding a permission. */
export const OWN_RECORD_ACTIONS: readonly string[] = Object.freeze(['read', 'update', 'change-password']);

/** A scope's subject `*` stands for the holder itself: a scope acts only for its own holder. */
function bindSubject(expr: PermissionSegments, holderId: string): PermissionSegments {
  if (expr.subject !== WILDCARD) return expr;
  return { subject: holderId, resource: expr.resource, action: expr.action, object: expr.object };
}

function anyCovers(list: readonly PermissionSegments[], need: PermissionSegments): boolean {
  return list.some((have) => segmentsCover(have, need));
}

function isForbidden(holder: PermissionHolder, need: PermissionSegments): boolean {
  return anyCovers(holder.ownForbidden, need) || anyCovers(holder.roleForbidden, need);
}

function isOwnRecord(holder: PermissionHolder, required: PermissionExpression): boolean {
  return (
    holder.kind === 'user' &&
    required.resource === 'users' &&
    required.subject === holder.id &&
    required.object === holder.id &&
    OWN_RECORD_ACTIONS.includes(required.action)
  );
}

/**
 * Decides whether `holder` may do `required`. The caller builds `required` with the caller's id as
 * subject (`<caller id>.<resource>.<action>.<object>`); `decide` trusts that subject.
 *
 * Order: forbidden (own or role) denies; else role permission, own permission, own record allow;
 * else `no_permission`. An allowed decision is then limited by the token's scopes, if any
 * (`scope`). Scopes never grant.
 */
export function decide(holder: PermissionHolder, required: PermissionExpression): Decision {
  const permission = required.toString();
  if (isForbidden(holder, required)) return { allowed: false, reason: 'forbidden', permission };

  let reason: DecisionReason;
  if (anyCovers(holder.rolePermissions, required)) reason = 'role_permission';
  else if (anyCovers(holder.ownPermissions, required)) reason = 'own_permission';
  else if (isOwnRecord(holder, required)) reason = 'own_record';
  else return { allowed: false, reason: 'no_permission', permission };

  const scopes = holder.scopes;
  if (scopes != null && !scopes.some((scope) => segmentsCover(bindSubject(scope, holder.id), required))) {
    return { allowed: false, reason: 'scope', permission };
  }
  return { allowed: true, reason, permission };
}

/**
 * Whether `holder` may put `scope` into a scoped token: the scope (subject `*` read as the holder)
 * must be covered by a role or own permission, not covered by any forbidden entry, and, when the
 * holder is itself a scoped token, lie within its current scopes. A scope naming another subject
 * than `*` or the holder's id is never held. The own-record rule does not make a scope held.
 */
export function holdsScope(holder: PermissionHolder, scope: PermissionExpression): boolean {
  if (scope.subject !== WILDCARD && scope.subject !== holder.id) return false;
  const bound = bindSubject(scope, holder.id);
  if (isForbidden(holder, bound)) return false;
  if (!anyCovers(holder.rolePermissions, bound) && !anyCovers(holder.ownPermissions, bound)) return false;
  const current = holder.scopes;
  if (current != null) {
    // Both sides read subject `*` as the holder, so `alice.users.read` and `users.read` are the same scope for alice.
    return current.some((have) => segmentsCover(bindSubject(have, holder.id), bound));
  }
  return true;
}

/**
 * Scope subset rule for narrowing a scoped token: every requested scope is covered by some current
 * scope, wildcard-aware (`users.read.abc` is covered by `users.read`; `users.*` is not covered by
 * `users.read`). An empty `requested` list is vacuously a subset: reject it earlier (`ScopeRequired`).
 */
export function isScopeSubset(
  requested: readonly PermissionExpression[],
  current: readonly PermissionExpression[],
): boolean {
  return requested.every((need) => current.some((have) => have.covers(need)));
}
