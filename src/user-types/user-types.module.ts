import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { UserTypeCache } from './user-type-cache';
import { UserTypeRepository } from './user-type.repository';
import { UserTypesController } from './user-types.controller';
import { UserTypesService } from './user-types.service';

@Module({
  imports: [EventsModule, CallerPermissionsModule],
  controllers: [UserTypesController],
  providers: [UserTypeRepository, UserTypeCache, UserTypesService],
  exports: [UserTypeRepository, UserTypeCache],
})
export class UserTypesModule {}
