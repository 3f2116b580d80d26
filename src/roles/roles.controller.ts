import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseInterceptors } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import { parseBulkIds, type ListPage } from '../common/query';
import { ApiJsonBody, ApiListParams, ApiListResponse, ApiQueryBody, BulkDeleteAnswerSchema, SysSchema } from '../common/api-docs';
import { BulkDeleteBodyDto, type QueryBody, QueryBodyParam } from '../common/query/query-body';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';
import { RoleBodyDto } from './role.dto';
import type { RoleResponse } from './role.mapper';
import { ROLE_SORTABLE_FIELDS } from './role.repository';
import { RolesService } from './roles.service';

export class RoleSchema {
  @ApiProperty() _id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
  @ApiPropertyOptional({ nullable: true, type: String }) description!: string | null;
  @ApiProperty({ type: [String] }) permissions!: string[];
  @ApiProperty({ type: [String] }) forbidden!: string[];
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: SysSchema }) sys!: SysSchema;
}

@ApiTags('roles')
@ApiAuth()
@Controller('memberships/:membershipId/roles')
@UseInterceptors(EventRecordingInterceptor)
export class RolesController {
  constructor(private readonly roles: RolesService) {}

  @Get()
  @RequirePermission('roles.read')
  @ApiOperation({ summary: 'List roles' })
  @ApiListParams(ROLE_SORTABLE_FIELDS)
  @ApiListResponse(RoleSchema)
  @ApiErrors(400, 403, 404)
  list(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.roles.list(caller, membershipId, { query });
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('roles.read')
  @ApiOperation({ summary: 'Query roles with where/select' })
  @ApiQueryBody({ where: { slug: { $ne: 'admin' } }, select: { name: 1, permissions: 1 } })
  @ApiListParams(ROLE_SORTABLE_FIELDS)
  @ApiListResponse(RoleSchema)
  @ApiErrors(400, 403, 404)
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.roles.list(caller, membershipId, { query, ...body });
  }

  // Declared before ':id' so that "search" is not taken for an id.
  @Get('search')
  @RequirePermission('roles.read')
  @ApiOperation({ summary: 'Roles whose name, slug or description contain the keyword (case-insensitive)' })
  @ApiQuery({ name: 'keyword', required: true, type: String })
  @ApiListParams(ROLE_SORTABLE_FIELDS)
  @ApiListResponse(RoleSchema)
  @ApiErrors(400, 403, 404)
  search(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    const { keyword, ...rest } = query;
    return this.roles.search(caller, membershipId, keyword, rest);
  }

  @Get(':id')
  @RequirePermission('roles.read', { object: 'id' })
  @ApiOperation({ summary: 'Get a role' })
  @ApiResponse({ status: 200, type: RoleSchema })
  @ApiErrors(403, 404)
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<RoleResponse> {
    return this.roles.get(membershipId, id);
  }

  @Post()
  @HttpCode(201)
  @RequirePermission('roles.create')
  @ApiOperation({ summary: 'Create a role (slug `admin` is reserved)' })
  @ApiResponse({ status: 201, type: RoleSchema })
  @ApiErrors(400, 403, 404, 409)
  create(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Body() body: RoleBodyDto): Promise<RoleResponse> {
    return this.roles.create(caller, membershipId, body);
  }

  @Put(':id')
  @RequirePermission('roles.update', { object: 'id' })
  @ApiOperation({ summary: 'Replace a role (the slug cannot change; the admin role cannot be changed)' })
  @ApiJsonBody(RoleBodyDto, {
    replace: { summary: 'New name and permissions (slug left out: it cannot change)', value: { name: 'Support agents', permissions: ['users.read'], forbidden: [] } },
  })
  @ApiResponse({ status: 200, type: RoleSchema })
  @ApiErrors(400, 403, 404, 409)
  update(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @Body() body: RoleBodyDto,
  ): Promise<RoleResponse> {
    return this.roles.update(caller, membershipId, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('roles.delete', { object: 'id' })
  @ApiOperation({ summary: 'Delete a role (not the admin role)' })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiErrors(403, 404, 409)
  delete(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string): Promise<void> {
    return this.roles.delete(caller, membershipId, id);
  }

  @Delete()
  @HttpCode(200)
  @RequirePermission('roles.delete')
  @ApiOperation({ summary: 'Delete several roles: {"ids": [...]} (1..1000); the admin role among them refuses the request' })
  @ApiResponse({ status: 200, type: BulkDeleteAnswerSchema })
  @ApiErrors(400, 403, 404, 409)
  bulkDelete(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Body() body: BulkDeleteBodyDto,
  ): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.roles.bulkDelete(caller, membershipId, parseBulkIds(body));
  }
}
