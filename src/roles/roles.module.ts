import { Global, Module } from '@nestjs/common';
import { PermissionCheckController } from './permission-check.controller';
import { RoleCache } from './role-cache';
import { RoleRepository } from './role.repository';
import { RolesController } from './roles.controller';
import { RolesService } from './roles.service';

@Global()
@Module({
  controllers: [PermissionCheckController, RolesController],
  providers: [RoleRepository, RoleCache, RolesService],
  exports: [RoleRepository, RoleCache],
})
export class RolesModule {}
