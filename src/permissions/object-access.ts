import { decide, type Decision, type PermissionHolder } from './decide';
import { escapePermissionSegment, PermissionExpression, WILDCARD } from './permission-expression';

/**
 * `<holder id>.<resource>.<action>.<object id or *>`: what a request asks for. The access guard
 * builds every route's requirement with it, so a bulk route or a list decides an id exactly as
 * that id's own route would.
 */
export function objectPermission(holderId: string, resource: string, action: string, objectId?: string): PermissionExpression {
  return PermissionExpression.of({
    subject: escapePermissionSegment(holderId),
    resource,
    action,
    object: objectId ? escapePermissionSegment(objectId) : WILDCARD,
  });
}

/** The per-id decision: `<resource>.<action>.<id>` for this holder, as the id's own route decides it. */
export function objectDecision(holder: PermissionHolder, resource: string, action: string, objectId?: string): Decision {
  return decide(holder, objectPermission(holder.id, resource, action, objectId));
}

/** The first id (in request order) whose own route would refuse the holder, or undefined when all are allowed. */
export function firstDeniedObject(holder: PermissionHolder, resource: string, action: string, ids: readonly string[]): string | undefined {
  return ids.find((id) => !objectDecision(holder, resource, action, id).allowed);
}

/** The raw id a literal object segment names (`a%2Eb` -> `a.b`), or null for an escape that is not UTF-8. */
function objectIdOf(segment: string): string | null {
  try {
    const id = decodeURIComponent(segment);
    // Only the one spelling the guard builds for that id names it.
    return escapePermissionSegment(id) === segment ? id : null;
  } catch {
    return null;
  }
}

/**
 * The ids a forbidden entry of the holder denies for `<resource>.<action>`: the literal objects of
 * its forbidden entries, each confirmed by the per-id decision. A list or `_query` leaves them out.
 * (A forbidden entry with object `*` denies the list route itself, so only literal objects remain.)
 */
export function forbiddenObjectIds(holder: PermissionHolder, resource: string, action: string): string[] {
  const ids = new Set<string>();
  for (const entry of [...holder.ownForbidden, ...holder.roleForbidden]) {
    if (entry.object === WILDCARD) continue;
    const id = objectIdOf(entry.object);
    if (id !== null && objectDecision(holder, resource, action, id).reason === 'forbidden') ids.add(id);
  }
  return [...ids];
}
