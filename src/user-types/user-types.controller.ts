import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import { ApiJsonBody, ApiListParams, ApiListResponse, ApiQueryBody, BulkDeleteAnswerSchema } from '../common/api-docs';
import { BulkDeleteBodyDto, type QueryBody, QueryBodyParam } from '../common/query/query-body';
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

  @Get()
  @RequirePermission('user-types.read')
  @ApiOperation({ summary: 'List user types (skip, limit, with_count, sort)' })
  @ApiListParams(SORTABLE)
  @ApiListResponse(UserTypeSchema)
  @ApiErrors(400, 403, 404)
  list(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.userTypes.list(caller, membershipId, query);
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('user-types.read')
  @ApiOperation({ summary: 'Query user types with {where, select}' })
  @ApiQueryBody({ where: { slug: 'employee' } })
  @ApiListParams(SORTABLE)
  @ApiListResponse(UserTypeSchema)
  @ApiErrors(400, 403, 404)
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.userTypes.list(caller, membershipId, query, body);
  }

  @Post()
  @RequirePermission('user-types.create')
  @ApiOperation({ summary: 'Create a user type' })
  @ApiBody({ type: UserTypeBodyDto })
  @ApiResponse({ status: 201, type: UserTypeSchema })
  @ApiErrors(400, 403, 404, 409)
  create(
    @Param('membershipId') membershipId: string,
    @CurrentCaller() caller: Caller,
    @Body(UserTypeBodyPipe) input: UserTypeInput,
  ): Promise<UserTypeResponse> {
    return this.userTypes.create(membershipId, caller, input);
  }

  @Get(':id')
  @RequirePermission('user-types.read', { object: 'id' })
  @ApiOperation({ summary: 'Get a user type' })
  @ApiResponse({ status: 200, type: UserTypeSchema })
  @ApiErrors(403, 404)
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<UserTypeResponse> {
    return this.userTypes.get(membershipId, id);
  }

  @Put(':id')
  @RequirePermission('user-types.update', { object: 'id' })
  @ApiOperation({ summary: 'Replace a user type (the slug cannot change)' })
  @ApiJsonBody(UserTypeBodyDto, {
    replace: {
      summary: 'New name and properties (slug left out: it cannot change)',
      value: { name: 'Employee', allow_additional_properties: false, properties: { department: { type: 'enum', values: ['sales', 'it'] } } },
    },
  })
  @ApiResponse({ status: 200, type: UserTypeSchema })
  @ApiErrors(400, 403, 404, 409)
  update(
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @CurrentCaller() caller: Caller,
    @Body(UserTypeBodyPipe) input: UserTypeInput,
  ): Promise<UserTypeResponse> {
    return this.userTypes.update(membershipId, id, caller, input);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('user-types.delete', { object: 'id' })
  @ApiOperation({ summary: 'Delete a user type (users of the type keep their fields)' })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiErrors(403, 404)
  async remove(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    await this.userTypes.remove(membershipId, id, caller);
  }

  @Delete()
  @HttpCode(200)
  @RequirePermission('user-types.delete')
  @ApiOperation({ summary: 'Delete several user types: {"ids": [...]}' })
  @ApiBody({ type: BulkDeleteBodyDto })
  @ApiResponse({ status: 200, type: BulkDeleteAnswerSchema })
  @ApiErrors(400, 403, 404)
  removeMany(
    @Param('membershipId') membershipId: string,
    @CurrentCaller() caller: Caller,
    @Body() body: unknown,
  ): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.userTypes.removeMany(membershipId, body, caller);
  }
}
