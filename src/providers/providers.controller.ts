import { Body, Controller, Param, Query } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller } from '../common/access-decorators';
import { ApiAuth } from '../common/openapi';
import type { ListPage } from '../common/query';
import { BulkDeleteRoute, CreateRoute, DeleteRoute, GetRoute, ListRoute, QueryRoute, ReplaceRoute } from '../common/crud/crud-routes';
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

  @ListRoute({ permission: 'providers.read', summary: 'List external identity providers', sortable: PROVIDER_SORTABLE_FIELDS, items: ProviderSchema })
  list(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.providers.list(caller, membershipId, query);
  }

  @QueryRoute({
    permission: 'providers.read',
    summary: 'Query providers with where / select',
    sortable: PROVIDER_SORTABLE_FIELDS,
    items: ProviderSchema,
    example: { where: { is_active: true }, select: { name: 1, issuer: 1 } },
    bodyRequired: false,
  })
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.providers.list(caller, membershipId, query, body);
  }

  @GetRoute({ permission: 'providers.read', summary: 'Get a provider (never its client secret)', answer: ProviderSchema })
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<ProviderResponse> {
    return this.providers.get(membershipId, id);
  }

  @CreateRoute({ permission: 'providers.create', summary: 'Create a provider (generic OpenID Connect; nothing is fetched from the issuer yet)', answer: ProviderSchema })
  create(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: ProviderBodyDto): Promise<ProviderResponse> {
    return this.providers.create(membershipId, caller, body);
  }

  @ReplaceRoute({
    permission: 'providers.update',
    summary: 'Replace a provider (same body as create; the slug is immutable); 409 IdenticalDocumentError when nothing changes',
    answer: ProviderSchema,
  })
  replace(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller, @Body() body: ProviderBodyDto): Promise<ProviderResponse> {
    return this.providers.replace(membershipId, id, caller, body);
  }

  @DeleteRoute({ permission: 'providers.delete', summary: 'Delete a provider and its links to users (the users and their sessions stay)' })
  delete(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    return this.providers.delete(membershipId, id, caller);
  }

  @BulkDeleteRoute({ permission: 'providers.delete', summary: 'Delete several providers: {"ids": [...]} (1..1000)' })
  deleteMany(
    @Param('membershipId') membershipId: string,
    @CurrentCaller() caller: Caller,
    // Typed (the validation pipe's whitelist applies as before); parseBulkIds checks the shape and answers the contract's error.
    @Body() body: BulkDeleteBodyDto,
  ): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.providers.deleteMany(membershipId, caller, body);
  }
}
