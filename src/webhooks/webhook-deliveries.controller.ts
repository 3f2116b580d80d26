import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { RequirePermission } from '../common/access-decorators';
import { queryBodyExamples } from '../common/api-docs';
import { ApiRoute } from '../common/api-route';
import { ApiAuth } from '../common/openapi';
import type { ListPage } from '../common/query';
import { type QueryBody, QueryBodyDto, QueryBodyParam } from '../common/query/query-body';
import { DeliveryResponseDto } from './delivery.dto';
import type { DeliveryResponse } from './delivery.mapper';
import { WebhookDeliveriesService } from './webhook-deliveries.service';

const DELIVERY_LIST = { items: DeliveryResponseDto, sortable: 'created_at (asc or desc); default newest first' };

/** A webhook's deliveries (contract "Durable webhook delivery"); the permission's object is the webhook. */
@Controller('memberships/:membershipId/webhooks/:id/deliveries')
@ApiTags('webhooks')
@ApiAuth()
export class WebhookDeliveriesController {
  constructor(private readonly deliveries: WebhookDeliveriesService) {}

  @Get()
  @RequirePermission('webhooks.read', { object: 'id' })
  @ApiRoute({ summary: "List a webhook's deliveries", list: DELIVERY_LIST, errors: [400, 403, 404] })
  list(@Param('membershipId') membershipId: string, @Param('id') id: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.deliveries.list(membershipId, id, { query });
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('webhooks.read', { object: 'id' })
  @ApiRoute({
    summary: "Query a webhook's deliveries with where / select (status, event_id, ...)",
    body: { model: QueryBodyDto, examples: queryBodyExamples({ where: { status: 'failed' }, select: { event_id: 1, attempts: 1, last_error: 1 } }), required: false },
    list: DELIVERY_LIST,
    errors: [400, 403, 404],
  })
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
  @ApiRoute({
    summary: 'Deliver again: pending, due at once, attempts from zero, the same X-Webhook-Delivery',
    answers: [{ status: 202, type: DeliveryResponseDto }],
    errors: [403, 404],
  })
  redeliver(@Param('membershipId') membershipId: string, @Param('id') id: string, @Param('deliveryId') deliveryId: string): Promise<DeliveryResponse> {
    return this.deliveries.redeliver(membershipId, id, deliveryId);
  }
}
