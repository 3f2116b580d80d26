import { Global, Module } from '@nestjs/common';
import { PermissionCheckController } from './permission-check.controller';
import { RoleCache } from './role-cache';
import { RoleRepository } from './role.repository';

@Global()
@Module({
  controllers: [PermissionCheckController],
  providers: [RoleRepository, RoleCache],
  exports: [RoleRepository, RoleCache],
})
export class RolesModule {}
