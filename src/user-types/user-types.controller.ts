import { Controller, UseInterceptors } from '@nestjs/common';
import { ApiExtraModels } from '@nestjs/swagger';
import { MembershipResourceController } from '../common/crud/membership-resource.controller';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';
import type { UserTypeResponse } from './user-type.mapper';
import { UserTypeBodyDto, UserTypeBodyPipe, type UserTypeInput } from './user-type.dto';
import { UserTypePropertySchema, UserTypeSchema } from './user-type.schemas';
import { UserTypesService } from './user-types.service';

@ApiExtraModels(UserTypePropertySchema)
@Controller('memberships/:membershipId/user-types')
@UseInterceptors(EventRecordingInterceptor)
export class UserTypesController extends MembershipResourceController<UserTypeInput, UserTypeResponse>({
  resource: 'user-types',
  names: { one: 'a user type', many: 'user types' },
  item: UserTypeSchema,
  body: UserTypeBodyDto,
  bodyPipe: UserTypeBodyPipe,
  sortable: '_id, slug, sys.created_at',
  list: { summary: 'List user types (skip, limit, with_count, sort)' },
  query: { summary: 'Query user types with {where, select}', example: { where: { slug: 'employee' } } },
  replace: {
    summary: 'Replace a user type (the slug cannot change)',
    operationId: 'UserTypes_update',
    examples: {
      replace: {
        summary: 'New name and properties (slug left out: it cannot change)',
        value: { name: 'Employee', allow_additional_properties: false, properties: { department: { type: 'enum', values: ['sales', 'it'] } } },
      },
    },
  },
  // Operation ids from before the shared handlers (update, remove, removeMany), kept for generated clients.
  delete: { summary: 'Delete a user type (users of the type keep their fields)', operationId: 'UserTypes_remove' },
  deleteMany: { summary: 'Delete several user types: {"ids": [...]}', operationId: 'UserTypes_removeMany' },
}) {
  constructor(userTypes: UserTypesService) {
    super(userTypes);
  }
}
