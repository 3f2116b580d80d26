import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseInterceptors } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import { parseBulkIds, type ListPage } from '../common/query';
import { ApiListParams, ApiListResponse, ApiQueryBody, BulkDeleteAnswerSchema, SysSchema } from '../common/api-docs';
import { BulkDeleteBodyDto, type QueryBody, QueryBodyParam } from '../common/query/query-body';
import { ApplicationBodyDto } from './application.dto';
import type { ApplicationResponse } from './application.mapper';
import { APPLICATION_SORTABLE_FIELDS } from './application.repository';
import { ApplicationsService, type ApplicationWithSecret } from './applications.service';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';

export class ApplicationSchema {
  @ApiProperty() _id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
  @ApiPropertyOptional({ nullable: true, type: String }) description!: string | null;
  @ApiPropertyOptional({ nullable: true, type: String }) role!: string | null;
  @ApiProperty({ type: [String] }) permissions!: string[];
  @ApiProperty({ type: [String] }) forbidden!: string[];
  @ApiProperty() is_active!: boolean;
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: SysSchema }) sys!: SysSchema;
}

export class ApplicationWithSecretSchema extends ApplicationSchema {
  @ApiProperty({ description: 'Shown only in this answer; Basic token: `<_id>:<secret>`' }) secret!: string;
}

@ApiTags('applications')
@ApiAuth()
@Controller('memberships/:membershipId/applications')
@UseInterceptors(EventRecordingInterceptor)
export class ApplicationsController {
  constructor(private readonly applications: ApplicationsService) {}

  @Get()
  @RequirePermission('applications.read')
  @ApiOperation({ summary: 'List applications' })
  @ApiListParams(APPLICATION_SORTABLE_FIELDS)
  @ApiListResponse(ApplicationSchema)
  @ApiErrors(400, 403, 404)
  list(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.applications.list(caller, membershipId, { query });
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('applications.read')
  @ApiOperation({ summary: 'Query applications with where/select' })
  @ApiQueryBody({ where: { is_active: true }, select: { name: 1, slug: 1 } })
  @ApiListParams(APPLICATION_SORTABLE_FIELDS)
  @ApiListResponse(ApplicationSchema)
  @ApiErrors(400, 403, 404)
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.applications.list(caller, membershipId, { query, ...body });
  }

  // Declared before ':id' so that "search" is not taken for an id.
  @Get('search')
  @RequirePermission('applications.read')
  @ApiOperation({ summary: 'Applications whose name, slug or description contain the keyword (case-insensitive)' })
  @ApiQuery({ name: 'keyword', required: true, type: String })
  @ApiListParams(APPLICATION_SORTABLE_FIELDS)
  @ApiListResponse(ApplicationSchema)
  @ApiErrors(400, 403, 404)
  search(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    const { keyword, ...rest } = query;
    return this.applications.search(caller, membershipId, keyword, rest);
  }

  @Get(':id')
  @RequirePermission('applications.read', { object: 'id' })
  @ApiOperation({ summary: 'Get an application (never its secret)' })
  @ApiResponse({ status: 200, type: ApplicationSchema })
  @ApiErrors(403, 404)
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<ApplicationResponse> {
    return this.applications.get(membershipId, id);
  }

  @Post()
  @HttpCode(201)
  @RequirePermission('applications.create')
  @ApiOperation({ summary: 'Create an application; the answer shows its secret once' })
  @ApiResponse({ status: 201, type: ApplicationWithSecretSchema })
  @ApiErrors(400, 403, 404, 409)
  create(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Body() body: ApplicationBodyDto): Promise<ApplicationWithSecret> {
    return this.applications.create(caller, membershipId, body);
  }

  @Put(':id')
  @RequirePermission('applications.update', { object: 'id' })
  @ApiOperation({ summary: 'Replace an application (the secret is kept)' })
  @ApiResponse({ status: 200, type: ApplicationSchema })
  @ApiErrors(400, 403, 404, 409)
  update(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @Body() body: ApplicationBodyDto,
  ): Promise<ApplicationResponse> {
    return this.applications.update(caller, membershipId, id, body);
  }

  @Post(':id/secret')
  @HttpCode(200)
  @RequirePermission('applications.update', { object: 'id' })
  @ApiOperation({ summary: 'Rotate the secret: the answer shows the new one once; the old one stops working at once' })
  @ApiResponse({ status: 200, type: ApplicationWithSecretSchema })
  @ApiErrors(403, 404)
  rotateSecret(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string): Promise<ApplicationWithSecret> {
    return this.applications.rotateSecret(caller, membershipId, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('applications.delete', { object: 'id' })
  @ApiOperation({ summary: 'Delete an application; its Basic token stops working at once' })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiErrors(403, 404)
  delete(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string): Promise<void> {
    return this.applications.delete(caller, membershipId, id);
  }

  @Delete()
  @HttpCode(200)
  @RequirePermission('applications.delete')
  @ApiOperation({ summary: 'Delete several applications: {"ids": [...]} (1..1000)' })
  @ApiResponse({ status: 200, type: BulkDeleteAnswerSchema })
  @ApiErrors(400, 403, 404)
  bulkDelete(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Body() body: BulkDeleteBodyDto,
  ): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.applications.bulkDelete(caller, membershipId, parseBulkIds(body));
  }
}
