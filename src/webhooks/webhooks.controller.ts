import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import type { ListPage } from '../common/query';
import { ApiListParams, ApiQueryBody } from '../common/api-docs';
import { type QueryBody, QueryBodyParam } from '../common/query/query-body';
import { BulkDeleteAnswerDto, BulkDeleteDto, WebhookBodyDto, WebhookPageDto, WebhookResponseDto } from './webhook.dto';
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

  @Get()
  @RequirePermission('webhooks.read')
  @ApiOperation({ summary: 'List webhooks' })
  @ApiListParams(WEBHOOK_SORT)
  @ApiResponse({ status: 200, type: WebhookPageDto })
  @ApiErrors(400, 403, 404)
  list(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.webhooks.list(caller, membershipId, query);
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('webhooks.read')
  @ApiOperation({ summary: 'Query webhooks with where / select' })
  @ApiListParams(WEBHOOK_SORT)
  @ApiQueryBody({ where: { event: 'UserCreated', status: 'active' }, select: { name: 1, request: 1 } }, false)
  @ApiResponse({ status: 200, type: WebhookPageDto })
  @ApiErrors(400, 403, 404)
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.webhooks.list(caller, membershipId, query, body);
  }

  @Get(':id')
  @RequirePermission('webhooks.read', { object: 'id' })
  @ApiOperation({ summary: 'Get a webhook' })
  @ApiResponse({ status: 200, type: WebhookResponseDto })
  @ApiErrors(403, 404)
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<WebhookResponse> {
    return this.webhooks.get(membershipId, id);
  }

  @Post()
  @HttpCode(201)
  @RequirePermission('webhooks.create')
  @ApiOperation({ summary: 'Create a webhook' })
  @ApiResponse({ status: 201, type: WebhookResponseDto })
  @ApiErrors(400, 403, 404, 409)
  create(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: WebhookBodyDto): Promise<WebhookResponse> {
    return this.webhooks.create(membershipId, caller, body);
  }

  @Put(':id')
  @RequirePermission('webhooks.update', { object: 'id' })
  @ApiOperation({ summary: 'Replace a webhook (same body as create); 409 IdenticalDocumentError when nothing changes' })
  @ApiResponse({ status: 200, type: WebhookResponseDto })
  @ApiErrors(400, 403, 404, 409)
  replace(
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @CurrentCaller() caller: Caller,
    @Body() body: WebhookBodyDto,
  ): Promise<WebhookResponse> {
    return this.webhooks.replace(membershipId, id, caller, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('webhooks.delete', { object: 'id' })
  @ApiOperation({ summary: 'Delete a webhook' })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiErrors(403, 404)
  delete(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    return this.webhooks.delete(membershipId, id, caller);
  }

  @Delete()
  @HttpCode(200)
  @RequirePermission('webhooks.delete')
  @ApiOperation({ summary: 'Delete several webhooks: {"ids": [...]} (1..1000)' })
  @ApiBody({ type: BulkDeleteDto })
  @ApiResponse({ status: 200, type: BulkDeleteAnswerDto })
  @ApiErrors(400, 403, 404)
  deleteMany(
    @Param('membershipId') membershipId: string,
    @CurrentCaller() caller: Caller,
    // Raw: parseBulkIds checks the shape and answers the contract's error.
    @Body() body: unknown,
  ): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.webhooks.deleteMany(membershipId, caller, body);
  }
}
