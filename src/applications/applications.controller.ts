import { Body, Controller, HttpCode, Param, Post, Query, UseInterceptors } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import { BulkDeleteRoute, CreateRoute, DeleteRoute, GetRoute, ListRoute, QueryRoute, ReplaceRoute, SearchRoute } from '../common/crud/crud-routes';
import { parseBulkIds, type ListPage } from '../common/query';
import { SysSchema } from '../common/api-docs';
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

  @ListRoute({ permission: 'applications.read', summary: 'List applications', sortable: APPLICATION_SORTABLE_FIELDS, items: ApplicationSchema })
  list(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.applications.list(caller, membershipId, { query });
  }

  @QueryRoute({
    permission: 'applications.read',
    summary: 'Query applications with where/select',
    sortable: APPLICATION_SORTABLE_FIELDS,
    items: ApplicationSchema,
    example: { where: { is_active: true }, select: { name: 1, slug: 1 } },
  })
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.applications.list(caller, membershipId, { query, ...body });
  }

  @SearchRoute({
    permission: 'applications.read',
    summary: 'Applications whose name, slug or description contain the keyword (case-insensitive)',
    sortable: APPLICATION_SORTABLE_FIELDS,
    items: ApplicationSchema,
  })
  search(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    const { keyword, ...rest } = query;
    return this.applications.search(caller, membershipId, keyword, rest);
  }

  @GetRoute({ permission: 'applications.read', summary: 'Get an application (never its secret)', answer: ApplicationSchema })
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<ApplicationResponse> {
    return this.applications.get(membershipId, id);
  }

  @CreateRoute({ permission: 'applications.create', summary: 'Create an application; the answer shows its secret once', answer: ApplicationWithSecretSchema })
  create(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Body() body: ApplicationBodyDto): Promise<ApplicationWithSecret> {
    return this.applications.create(caller, membershipId, body);
  }

  @ReplaceRoute({ permission: 'applications.update', summary: 'Replace an application (the secret is kept)', answer: ApplicationSchema })
  update(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string, @Body() body: ApplicationBodyDto): Promise<ApplicationResponse> {
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

  @DeleteRoute({ permission: 'applications.delete', summary: 'Delete an application; its Basic token stops working at once' })
  delete(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string): Promise<void> {
    return this.applications.delete(caller, membershipId, id);
  }

  @BulkDeleteRoute({ permission: 'applications.delete', summary: 'Delete several applications: {"ids": [...]} (1..1000)' })
  bulkDelete(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Body() body: BulkDeleteBodyDto): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.applications.bulkDelete(caller, membershipId, parseBulkIds(body));
  }
}
