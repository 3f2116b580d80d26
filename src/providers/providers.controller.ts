import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import type { ListPage } from '../common/query';
import { ApiListParams, ApiListResponse, ApiQueryBody, BulkDeleteAnswerSchema } from '../common/api-docs';
import { BulkDeleteBodyDto, type QueryBody, QueryBodyParam } from '../common/query/query-body';
import { ProviderBodyDto, ProviderSchema } from './provider.dto';
import type { ProviderResponse } from './provider.mapper';
import { PROVIDER_SORTABLE_FIELDS } from './provider.repository';
import { ProvidersService } from './providers.service';

@ApiTags('providers')
@ApiAuth()
@ApiParam({ name: 'membershipId' })
@Controller('memberships/:membershipId/providers')
export class ProvidersController {
  constructor(private readonly providers: ProvidersService) {}

  @Get()
  @RequirePermission('providers.read')
  @ApiOperation({ summary: 'List external identity providers' })
  @ApiListParams(PROVIDER_SORTABLE_FIELDS)
  @ApiListResponse(ProviderSchema)
  @ApiErrors(400, 403, 404)
  list(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.providers.list(caller, membershipId, query);
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('providers.read')
  @ApiOperation({ summary: 'Query providers with where / select' })
  @ApiListParams(PROVIDER_SORTABLE_FIELDS)
  @ApiQueryBody({ where: { is_active: true }, select: { name: 1, issuer: 1 } }, false)
  @ApiListResponse(ProviderSchema)
  @ApiErrors(400, 403, 404)
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.providers.list(caller, membershipId, query, body);
  }

  @Get(':id')
  @RequirePermission('providers.read', { object: 'id' })
  @ApiOperation({ summary: 'Get a provider (never its client secret)' })
  @ApiResponse({ status: 200, type: ProviderSchema })
  @ApiErrors(403, 404)
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<ProviderResponse> {
    return this.providers.get(membershipId, id);
  }

  @Post()
  @HttpCode(201)
  @RequirePermission('providers.create')
  @ApiOperation({ summary: 'Create a provider (generic OpenID Connect; nothing is fetched from the issuer yet)' })
  @ApiResponse({ status: 201, type: ProviderSchema })
  @ApiErrors(400, 403, 404, 409)
  create(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: ProviderBodyDto): Promise<ProviderResponse> {
    return this.providers.create(membershipId, caller, body);
  }

  @Put(':id')
  @RequirePermission('providers.update', { object: 'id' })
  @ApiOperation({ summary: 'Replace a provider (same body as create; the slug is immutable); 409 IdenticalDocumentError when nothing changes' })
  @ApiResponse({ status: 200, type: ProviderSchema })
  @ApiErrors(400, 403, 404, 409)
  replace(
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @CurrentCaller() caller: Caller,
    @Body() body: ProviderBodyDto,
  ): Promise<ProviderResponse> {
    return this.providers.replace(membershipId, id, caller, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('providers.delete', { object: 'id' })
  @ApiOperation({ summary: 'Delete a provider and its links to users (the users and their sessions stay)' })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiErrors(403, 404)
  delete(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    return this.providers.delete(membershipId, id, caller);
  }

  @Delete()
  @HttpCode(200)
  @RequirePermission('providers.delete')
  @ApiOperation({ summary: 'Delete several providers: {"ids": [...]} (1..1000)' })
  @ApiResponse({ status: 200, type: BulkDeleteAnswerSchema })
  @ApiErrors(400, 403, 404)
  deleteMany(
    @Param('membershipId') membershipId: string,
    @CurrentCaller() caller: Caller,
    // Typed for the document only; parseBulkIds checks the shape and answers the contract's error.
    @Body() body: BulkDeleteBodyDto,
  ): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.providers.deleteMany(membershipId, caller, body);
  }
}
