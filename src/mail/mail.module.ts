import { Module } from '@nestjs/common';
import { MailhookRepository } from './mailhook.repository';
import { MailhooksController } from './mailhooks.controller';
import { MailhooksService } from './mailhooks.service';

/** Mail hooks API (contract "Mail providers, mail hooks and the mail queue"). */
@Module({
  controllers: [MailhooksController],
  providers: [MailhookRepository, MailhooksService],
})
export class MailModule {}
