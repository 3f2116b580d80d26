import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import { decide, type Decision, firstDeniedObject, forbiddenObjectIds, type Granter, type PermissionExpression, type PermissionHolder } from '../permissions';
import { ADMIN_ROLE_SLUG, SERVICE_RESOURCES } from './role.mapper';
import { parseStored, RoleCache } from './role-cache';
import type { Caller } from '../common/caller';

/** Turns a caller into the permission holder the pure decision module reasons about. */
@Injectable()
export class CallerPermissions {
  constructor(private readonly roles: RoleCache) {}

  async holderOf(caller: Caller): Promise<PermissionHolder> {
    const role = await this.roles.permissionsOf(caller.membershipId, caller.roleSlug);
    return {
      id: caller.id,
      kind: caller.kind,
      ownPermissions: parseStored(caller.ownPermissions),
      ownForbidden: parseStored(caller.ownForbidden),
      rolePermissions: role.permissions,
      roleForbidden: role.forbidden,
      scopes: caller.kind === 'user' && caller.scopes ? parseStored(caller.scopes) : null,
    };
  }

  /**
   * The caller as a granter (Grants). A holder of the membership's admin role may also grant the
   * resources of third-party APIs (any resource the service does not have), as it always could:
   * setting up the roles a protected API checks is an admin's job.
   */
  async granterOf(caller: Caller): Promise<Granter> {
    const holder = await this.holderOf(caller);
    if (caller.roleSlug !== ADMIN_ROLE_SLUG) return { holder };
    return { holder, grantsUnheld: (resource) => !SERVICE_RESOURCES.has(resource) };
  }

  async decide(caller: Caller, required: PermissionExpression): Promise<Decision> {
    return decide(await this.holderOf(caller), required);
  }

  /**
   * A bulk route is guarded by `<resource>.<action>` on `*`, which a forbidden entry naming one id
   * does not cover: each id is decided here as its own route would decide it, and one refused id
   * refuses the whole request (403 naming it) before anything changes.
   */
  async assertMayActOnEach(caller: Caller, resource: string, action: string, ids: readonly string[]): Promise<void> {
    const denied = firstDeniedObject(await this.holderOf(caller), resource, action, ids);
    if (denied !== undefined) {
      throw new DomainError('AccessDenied', `Permission ${resource}.${action} is required for every id (missing for ${JSON.stringify(denied.slice(0, 128))})`);
    }
  }

  /** Ids a list or `_query` of `resource` leaves out: those whose `<resource>.read.<id>` a forbidden entry denies the caller. */
  async hiddenFromLists(caller: Caller, resource: string): Promise<string[]> {
    return forbiddenObjectIds(await this.holderOf(caller), resource, 'read');
  }
}
