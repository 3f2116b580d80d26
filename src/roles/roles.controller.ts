import { Body, Controller, Param, Query, UseInterceptors } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller } from '../common/access-decorators';
import { ApiAuth } from '../common/openapi';
import { BulkDeleteRoute, CreateRoute, DeleteRoute, GetRoute, ListRoute, QueryRoute, ReplaceRoute, SearchRoute } from '../common/crud/crud-routes';
import { parseBulkIds, type ListPage } from '../common/query';
import { SysSchema } from '../common/api-docs';
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

  @ListRoute({ permission: 'roles.read', summary: 'List roles', sortable: ROLE_SORTABLE_FIELDS, items: RoleSchema })
  list(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.roles.list(caller, membershipId, { query });
  }

  @QueryRoute({
    permission: 'roles.read',
    summary: 'Query roles with where/select',
    sortable: ROLE_SORTABLE_FIELDS,
    items: RoleSchema,
    example: { where: { slug: { $ne: 'admin' } }, select: { name: 1, permissions: 1 } },
  })
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.roles.list(caller, membershipId, { query, ...body });
  }

  @SearchRoute({
    permission: 'roles.read',
    summary: 'Roles whose name, slug or description contain the keyword (case-insensitive)',
    sortable: ROLE_SORTABLE_FIELDS,
    items: RoleSchema,
  })
  search(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    const { keyword, ...rest } = query;
    return this.roles.search(caller, membershipId, keyword, rest);
  }

  @GetRoute({ permission: 'roles.read', summary: 'Get a role', answer: RoleSchema })
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<RoleResponse> {
    return this.roles.get(membershipId, id);
  }

  @CreateRoute({ permission: 'roles.create', summary: 'Create a role (slug `admin` is reserved)', answer: RoleSchema })
  create(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Body() body: RoleBodyDto): Promise<RoleResponse> {
    return this.roles.create(caller, membershipId, body);
  }

  @ReplaceRoute({
    permission: 'roles.update',
    summary: 'Replace a role (the slug cannot change; the admin role cannot be changed)',
    answer: RoleSchema,
    body: {
      model: RoleBodyDto,
      examples: {
        replace: { summary: 'New name and permissions (slug left out: it cannot change)', value: { name: 'Support agents', permissions: ['users.read'], forbidden: [] } },
      },
    },
  })
  update(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string, @Body() body: RoleBodyDto): Promise<RoleResponse> {
    return this.roles.update(caller, membershipId, id, body);
  }

  @DeleteRoute({ permission: 'roles.delete', summary: 'Delete a role (not the admin role)', errors: [403, 404, 409] })
  delete(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string): Promise<void> {
    return this.roles.delete(caller, membershipId, id);
  }

  @BulkDeleteRoute({
    permission: 'roles.delete',
    summary: 'Delete several roles: {"ids": [...]} (1..1000); the admin role among them refuses the request',
    errors: [400, 403, 404, 409],
  })
  bulkDelete(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Body() body: BulkDeleteBodyDto): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.roles.bulkDelete(caller, membershipId, parseBulkIds(body));
  }
}
