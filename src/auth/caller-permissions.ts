import { Injectable } from '@nestjs/common';
import { decide, type Decision, type PermissionExpression, type PermissionHolder } from '../permissions';
import { parseStored, RoleCache } from '../roles/role-cache';
import type { Caller } from './caller';

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

  async decide(caller: Caller, required: PermissionExpression): Promise<Decision> {
    return decide(await this.holderOf(caller), required);
  }
}
