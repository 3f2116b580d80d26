import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import type { ListPage, ListRequest } from '../common/query';
import { DeliveryRepository } from './delivery.repository';
import { type DeliveryResponse, toDeliveryResponse } from './delivery.mapper';
import { WebhookRepository } from './webhook.repository';

/** A webhook's deliveries: the list, and redelivery (contract "Durable webhook delivery"). */
@Injectable()
export class WebhookDeliveriesService {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly deliveries: DeliveryRepository,
  ) {}

  async list(membershipId: string, webhookId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    await this.assertWebhook(membershipId, webhookId);
    return this.deliveries.list(membershipId, webhookId, request);
  }

  /**
   * Pending again with attempts from zero, due at once, under the same id (the receiver sees the
   * same X-Webhook-Delivery). A delivery of a webhook that is passive by then ends canceled at its claim.
   */
  async redeliver(membershipId: string, webhookId: string, deliveryId: string): Promise<DeliveryResponse> {
    await this.assertWebhook(membershipId, webhookId);
    const row = await this.deliveries.redeliver(membershipId, webhookId, deliveryId);
    if (!row) throw new DomainError('DeliveryNotFound', 'The delivery does not exist');
    return toDeliveryResponse(row);
  }

  private async assertWebhook(membershipId: string, webhookId: string): Promise<void> {
    if (!(await this.webhooks.findById(membershipId, webhookId))) throw new DomainError('WebhookNotFound', 'The webhook does not exist');
  }
}
