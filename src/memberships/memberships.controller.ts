import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import type { ListPage } from '../common/query';
import { ApiListParams, ApiListResponse, ApiQueryBody } from '../common/api-docs';
import type { ProvisionedMembership } from './membership-provisioner';
import { CreateMembershipDto, UpdateMembershipDto } from './membership.dto';
import type { MembershipResponse } from './membership.mapper';
import { MembershipSchema, ProvisionedMembershipSchema } from './membership.schemas';
import { MembershipsService } from './memberships.service';
import { type QueryBody, QueryBodyParam } from '../common/query/query-body';

const SORTABLE = '_id, name, slug, sys.created_at, sys.modified_at';

/**
 * Memberships are addressed by `{id}`, not `{membershipId}`: these routes are not scoped to the
 * caller's membership by the access guard; the service applies the tenancy rules instead.
 */
@ApiTags('memberships')
@ApiAuth()
@Controller('memberships')
export class MembershipsController {
  constructor(private readonly memberships: MembershipsService) {}

  @Get()
  @RequirePermission('memberships.read')
  @ApiOperation({ summary: 'List memberships (system membership callers only)' })
  @ApiListParams(SORTABLE)
  @ApiListResponse(MembershipSchema)
  @ApiErrors(400, 403)
  list(@CurrentCaller() caller: Caller, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.memberships.list(caller, { query });
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('memberships.read')
  @ApiOperation({ summary: 'Query memberships with where/select (system membership callers only)' })
  @ApiQueryBody({ where: { slug: { $in: ['acme', 'globex'] } }, select: { name: 1, slug: 1 } })
  @ApiListParams(SORTABLE)
  @ApiListResponse(MembershipSchema)
  @ApiErrors(400, 403)
  query(@CurrentCaller() caller: Caller, @Query() query: Record<string, unknown>, @QueryBodyParam() body: QueryBody): Promise<ListPage<Record<string, unknown>>> {
    return this.memberships.list(caller, { query, ...body });
  }

  @Get(':id')
  @RequirePermission('memberships.read', { object: 'id' })
  @ApiOperation({ summary: 'Get a membership (own; any for system membership callers)' })
  @ApiResponse({ status: 200, type: MembershipSchema })
  @ApiErrors(403, 404)
  get(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<MembershipResponse> {
    return this.memberships.get(caller, id);
  }

  @Post()
  @HttpCode(201)
  @RequirePermission('memberships.create')
  @ApiOperation({ summary: 'Create a membership with its admin role, optional first admin user and optional application (system membership callers only)' })
  @ApiResponse({ status: 201, type: ProvisionedMembershipSchema })
  @ApiErrors(400, 403, 409)
  create(@CurrentCaller() caller: Caller, @Body() body: CreateMembershipDto): Promise<ProvisionedMembership> {
    return this.memberships.create(caller, body);
  }

  @Put(':id')
  @RequirePermission('memberships.update', { object: 'id' })
  @ApiOperation({
    summary: 'Replace the settings of a membership (own; any for system membership callers)',
    description:
      'Omitted settings return to their defaults; an omitted slug is kept. A new name or slug changes the token issuer/audience, so earlier tokens of the membership stop verifying.',
  })
  @ApiResponse({ status: 200, type: MembershipSchema })
  @ApiErrors(400, 403, 404, 409)
  update(@CurrentCaller() caller: Caller, @Param('id') id: string, @Body() body: UpdateMembershipDto): Promise<MembershipResponse> {
    return this.memberships.update(caller, id, body);
  }

  @Post(':id/secret-key')
  @HttpCode(200)
  @RequirePermission('memberships.update', { object: 'id' })
  @ApiOperation({ summary: 'Rotate the signing key; every earlier token of the membership becomes InvalidToken' })
  @ApiResponse({ status: 200, type: MembershipSchema })
  @ApiErrors(403, 404)
  rotateSecretKey(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<MembershipResponse> {
    return this.memberships.rotateSecretKey(caller, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('memberships.delete', { object: 'id' })
  @ApiOperation({ summary: 'Delete an empty membership (system membership callers only; not the system membership)' })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiErrors(403, 404, 409)
  delete(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<void> {
    return this.memberships.delete(caller, id);
  }
}
