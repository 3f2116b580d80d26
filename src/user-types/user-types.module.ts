import { Module } from '@nestjs/common';
import { UserTypeCache } from './user-type-cache';
import { UserTypeRepository } from './user-type.repository';
import { UserTypesController } from './user-types.controller';
import { UserTypesService } from './user-types.service';

@Module({
  controllers: [UserTypesController],
  providers: [UserTypeRepository, UserTypeCache, UserTypesService],
  exports: [UserTypeRepository, UserTypeCache],
})
export class UserTypesModule {}
