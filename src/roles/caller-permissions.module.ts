import { Module } from '@nestjs/common';
import { CallerPermissions } from './caller-permissions';
import { RoleCache } from './role-cache';
import { RoleRepository } from './role.repository';

/**
 * What a caller may do: the role repository and cache its permissions are read from. Apart from
 * RolesModule because every feature checks permissions, and RolesModule itself records events.
 */
@Module({
  providers: [RoleRepository, RoleCache, CallerPermissions],
  exports: [RoleRepository, RoleCache, CallerPermissions],
})
export class CallerPermissionsModule {}
