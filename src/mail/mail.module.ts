import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { OutboundModule } from '../outbound/outbound.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { MailDelivery } from './mail-delivery';
import { MailDispatcher } from './mail-dispatcher';
import { MailProvidersController } from './mail-providers.controller';
import { MailProvidersService } from './mail-providers.service';
import { MailhookRepository } from './mailhook.repository';
import { MailhooksController } from './mailhooks.controller';
import { MailhooksService } from './mailhooks.service';
import { SmtpEgress } from './smtp-egress';

/** Mail hooks API and the dispatcher that sends them after events commit (contract "Mail providers, mail hooks and the mail queue"). */
@Module({
  imports: [OutboundModule, MembershipStoreModule, EventsModule, CallerPermissionsModule],
  controllers: [MailhooksController, MailProvidersController],
  providers: [MailhookRepository, MailhooksService, SmtpEgress, MailDelivery, MailDispatcher, MailProvidersService],
  exports: [MailDispatcher],
})
export class MailModule {}
