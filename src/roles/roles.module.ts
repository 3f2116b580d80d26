import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { CallerPermissionsModule } from './caller-permissions.module';
import { PermissionCheckController } from './permission-check.controller';
import { RolesController } from './roles.controller';
import { RolesService } from './roles.service';

@Module({
  imports: [CallerPermissionsModule, EventsModule],
  controllers: [PermissionCheckController, RolesController],
  providers: [RolesService],
})
export class RolesModule {}
