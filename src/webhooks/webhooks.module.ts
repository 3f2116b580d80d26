import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { OutboundModule } from '../outbound/outbound.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { DeliveryRepository } from './delivery.repository';
import { WebhookDeliveriesController } from './webhook-deliveries.controller';
import { WebhookDeliveriesService } from './webhook-deliveries.service';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookRepository } from './webhook.repository';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Webhooks API, their deliveries, and the dispatcher that calls them after events commit. */
@Module({
  imports: [OutboundModule, EventsModule, CallerPermissionsModule],
  controllers: [WebhooksController, WebhookDeliveriesController],
  providers: [WebhookRepository, WebhooksService, WebhookDispatcher, DeliveryRepository, WebhookDeliveriesService],
  exports: [WebhookDispatcher],
})
export class WebhooksModule {}
