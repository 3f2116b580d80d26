import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { OutboundModule } from '../outbound/outbound.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { WebhookDispatcher } from './webhook-dispatcher';
import { WebhookRepository } from './webhook.repository';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** Webhooks API and the dispatcher that calls them after events commit. */
@Module({
  imports: [OutboundModule, EventsModule, CallerPermissionsModule],
  controllers: [WebhooksController],
  providers: [WebhookRepository, WebhooksService, WebhookDispatcher],
  exports: [WebhookDispatcher],
})
export class WebhooksModule {}
