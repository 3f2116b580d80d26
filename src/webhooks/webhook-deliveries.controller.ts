import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/access-decorators';
import { ApiListParams, ApiListResponse, ApiQueryBody } from '../common/api-docs';
import { ApiAuth, ApiErrors } from '../common/openapi';
import type { ListPage } from '../common/query';
import { type QueryBody, QueryBodyParam } from '../common/query/query-body';
import { DeliveryResponseDto } from './delivery.dto';
import type { DeliveryResponse } from './delivery.mapper';
import { WebhookDeliveriesService } from './webhook-deliveries.service';

const SORTABLE = 'created_at (asc or desc); default newest first';

/** A webhook's deliveries (contract "Durable webhook delivery"); the permission's object is the webhook. */
@Controller('memberships/:membershipId/webhooks/:id/deliveries')
@ApiTags('webhooks')
@ApiAuth()
export class WebhookDeliveriesController {
  constructor(private readonly deliveries: WebhookDeliveriesService) {}

  @Get()
  @RequirePermission('webhooks.read', { object: 'id' })
  @ApiOperation({ summary: "List a webhook's deliveries" })
  @ApiErrors(400, 403, 404)
  @ApiListParams(SORTABLE)
  @ApiListResponse(DeliveryResponseDto)
  list(@Param('membershipId') membershipId: string, @Param('id') id: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.deliveries.list(membershipId, id, { query });
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('webhooks.read', { object: 'id' })
  @ApiOperation({ summary: "Query a webhook's deliveries with where / select (status, event_id, ...)" })
  @ApiErrors(400, 403, 404)
  @ApiQueryBody({ where: { status: 'failed' }, select: { event_id: 1, attempts: 1, last_error: 1 } }, false)
  @ApiListParams(SORTABLE)
  @ApiListResponse(DeliveryResponseDto)
  query(
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.deliveries.list(membershipId, id, { query, ...body });
  }

  @Post(':deliveryId/redeliver')
  @HttpCode(202)
  @RequirePermission('webhooks.update', { object: 'id' })
  @ApiOperation({ summary: 'Deliver again: pending, due at once, attempts from zero, the same X-Webhook-Delivery' })
  @ApiErrors(403, 404)
  @ApiResponse({ status: 202, type: DeliveryResponseDto })
  redeliver(@Param('membershipId') membershipId: string, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<DeliveryResponse> {
    return this.deliveries.redeliver(membershipId, id, deliveryId);
  }
}
