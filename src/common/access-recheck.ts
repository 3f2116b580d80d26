import type { Caller } from './caller';
import type { PermissionRequirement } from './access-decorators';

/**
 * The access guard's decision taken again, for a request whose work starts after the guard has
 * run: an event stream fixes its start position once the guard has let it through, and a
 * revocation (or a role change, a rotated secret, a deleted membership) committed between the two
 * is neither refused by the guard nor read by the stream, which starts after it. The stream asks
 * again once its position is fixed: whatever commits later, it reads.
 *
 * The access layer provides it (ACCESS_RECHECK); the features below that layer know only this shape.
 */
export interface AccessRecheck {
  /**
   * The caller of `authorization` as the guard finds it now for a route of `membershipId` that
   * requires `requirement` (with no object parameter); throws the guard's errors (401, 403, 404).
   */
  recheck(authorization: unknown, membershipId: string, requirement: PermissionRequirement): Promise<Caller>;
}

export const ACCESS_RECHECK = Symbol('ACCESS_RECHECK');
