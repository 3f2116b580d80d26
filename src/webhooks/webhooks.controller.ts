import { Body, Controller, Param, Query, UseInterceptors } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller } from '../common/access-decorators';
import { ApiAuth } from '../common/openapi';
import type { ListPage } from '../common/query';
import { BulkDeleteRoute, CreateRoute, DeleteRoute, GetRoute, ListRoute, QueryRoute, ReplaceRoute } from '../common/crud/crud-routes';
import { type QueryBody, QueryBodyParam } from '../common/query/query-body';
import { WebhookBodyDto, WebhookResponseDto } from './webhook.dto';
import type { WebhookResponse } from './webhook.mapper';
import { WebhooksService } from './webhooks.service';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';

const WEBHOOK_SORT = 'slug or sys.created_at, optionally followed by asc or desc; default creation order';

@ApiTags('webhooks')
@ApiAuth()
@ApiParam({ name: 'membershipId' })
@Controller('memberships/:membershipId/webhooks')
@UseInterceptors(EventRecordingInterceptor)
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @ListRoute({ permission: 'webhooks.read', summary: 'List webhooks', sortable: WEBHOOK_SORT, items: WebhookResponseDto })
  list(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.webhooks.list(caller, membershipId, query);
  }

  @QueryRoute({
    permission: 'webhooks.read',
    summary: 'Query webhooks with where / select',
    sortable: WEBHOOK_SORT,
    items: WebhookResponseDto,
    example: { where: { event: 'UserCreated', status: 'active' }, select: { name: 1, request: 1 } },
    bodyRequired: false,
  })
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.webhooks.list(caller, membershipId, query, body);
  }

  @GetRoute({ permission: 'webhooks.read', summary: 'Get a webhook', answer: WebhookResponseDto })
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<WebhookResponse> {
    return this.webhooks.get(membershipId, id);
  }

  @CreateRoute({ permission: 'webhooks.create', summary: 'Create a webhook', answer: WebhookResponseDto })
  create(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: WebhookBodyDto): Promise<WebhookResponse> {
    return this.webhooks.create(membershipId, caller, body);
  }

  @ReplaceRoute({
    permission: 'webhooks.update',
    summary: 'Replace a webhook (same body as create); 409 IdenticalDocumentError when nothing changes',
    answer: WebhookResponseDto,
  })
  replace(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller, @Body() body: WebhookBodyDto): Promise<WebhookResponse> {
    return this.webhooks.replace(membershipId, id, caller, body);
  }

  @DeleteRoute({ permission: 'webhooks.delete', summary: 'Delete a webhook' })
  delete(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    return this.webhooks.delete(membershipId, id, caller);
  }

  @BulkDeleteRoute({ permission: 'webhooks.delete', summary: 'Delete several webhooks: {"ids": [...]} (1..1000)' })
  deleteMany(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: unknown): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.webhooks.deleteMany(membershipId, caller, body);
  }
}
