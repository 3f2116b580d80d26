import { Body, Controller, Param, Query, UseInterceptors } from '@nestjs/common';
import { ApiExtraModels, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller } from '../common/access-decorators';
import { ApiAuth } from '../common/openapi';
import { BulkDeleteRoute, CreateRoute, DeleteRoute, GetRoute, ListRoute, QueryRoute, ReplaceRoute } from '../common/crud/crud-routes';
import { type QueryBody, QueryBodyParam } from '../common/query/query-body';
import type { ListPage } from '../common/query';
import type { UserTypeResponse } from './user-type.mapper';
import { UserTypeBodyDto, UserTypeBodyPipe, type UserTypeInput } from './user-type.dto';
import { UserTypePropertySchema, UserTypeSchema } from './user-type.schemas';
import { UserTypesService } from './user-types.service';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';

const SORTABLE = '_id, slug, sys.created_at';

@ApiTags('user-types')
@ApiExtraModels(UserTypePropertySchema)
@ApiAuth()
@Controller('memberships/:membershipId/user-types')
@UseInterceptors(EventRecordingInterceptor)
export class UserTypesController {
  constructor(private readonly userTypes: UserTypesService) {}

  @ListRoute({ permission: 'user-types.read', summary: 'List user types (skip, limit, with_count, sort)', sortable: SORTABLE, items: UserTypeSchema })
  list(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.userTypes.list(caller, membershipId, query);
  }

  @QueryRoute({
    permission: 'user-types.read',
    summary: 'Query user types with {where, select}',
    sortable: SORTABLE,
    items: UserTypeSchema,
    example: { where: { slug: 'employee' } },
  })
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.userTypes.list(caller, membershipId, query, body);
  }

  @CreateRoute({ permission: 'user-types.create', summary: 'Create a user type', answer: UserTypeSchema, body: UserTypeBodyDto })
  create(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body(UserTypeBodyPipe) input: UserTypeInput): Promise<UserTypeResponse> {
    return this.userTypes.create(membershipId, caller, input);
  }

  @GetRoute({ permission: 'user-types.read', summary: 'Get a user type', answer: UserTypeSchema })
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<UserTypeResponse> {
    return this.userTypes.get(membershipId, id);
  }

  @ReplaceRoute({
    permission: 'user-types.update',
    summary: 'Replace a user type (the slug cannot change)',
    answer: UserTypeSchema,
    body: {
      model: UserTypeBodyDto,
      examples: {
        replace: {
          summary: 'New name and properties (slug left out: it cannot change)',
          value: { name: 'Employee', allow_additional_properties: false, properties: { department: { type: 'enum', values: ['sales', 'it'] } } },
        },
      },
    },
  })
  update(
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @CurrentCaller() caller: Caller,
    @Body(UserTypeBodyPipe) input: UserTypeInput,
  ): Promise<UserTypeResponse> {
    return this.userTypes.update(membershipId, id, caller, input);
  }

  @DeleteRoute({ permission: 'user-types.delete', summary: 'Delete a user type (users of the type keep their fields)' })
  async remove(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    await this.userTypes.remove(membershipId, id, caller);
  }

  @BulkDeleteRoute({ permission: 'user-types.delete', summary: 'Delete several user types: {"ids": [...]}' })
  removeMany(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: unknown): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.userTypes.removeMany(membershipId, body, caller);
  }
}
