import type { Caller } from '../auth/caller';
import type { CallerPermissions } from '../auth/caller-permissions';
import { DomainError } from '../common/errors';
import { decide, escapePermissionSegment, PermissionExpression, type PermissionHolder } from '../permissions';

/** `<caller id>.<resource>.<action>.<object id or *>`: what a request asks for, as the access guard builds it. */
export function requiredPermission(caller: Caller, resource: string, action: string, objectId?: string): PermissionExpression {
  return PermissionExpression.of({
    subject: escapePermissionSegment(caller.id),
    resource,
    action,
    object: objectId ? escapePermissionSegment(objectId) : '*',
  });
}

export function holderMay(holder: PermissionHolder, caller: Caller, resource: string, action: string, objectId?: string): boolean {
  return decide(holder, requiredPermission(caller, resource, action, objectId)).allowed;
}

/**
 * A bulk route is guarded by `<resource>.<action>` on `*`; a forbidden entry naming one id
 * (`roles.delete.<id>`) does not cover `*`, so each id is checked here, as its own route would be.
 */
export async function assertMayActOnEach(
  permissions: CallerPermissions,
  caller: Caller,
  resource: string,
  action: string,
  ids: readonly string[],
): Promise<void> {
  const holder = await permissions.holderOf(caller);
  const denied = ids.find((id) => !holderMay(holder, caller, resource, action, id));
  if (denied !== undefined) {
    throw new DomainError('AccessDenied', `Permission ${resource}.${action} is required for every id (missing for ${JSON.stringify(denied.slice(0, 64))})`);
  }
}
