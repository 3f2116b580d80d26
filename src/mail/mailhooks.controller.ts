import { Controller, UseInterceptors } from '@nestjs/common';
import { MembershipResourceController } from '../common/crud/membership-resource.controller';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';
import { MailhookBodyDto, MailhookResponseDto } from './mailhook.dto';
import type { MailhookResponse } from './mailhook.mapper';
import { MailhooksService } from './mailhooks.service';

@Controller('memberships/:membershipId/mailhooks')
@UseInterceptors(EventRecordingInterceptor)
export class MailhooksController extends MembershipResourceController<MailhookBodyDto, MailhookResponse>({
  resource: 'mailhooks',
  names: { one: 'a mail hook', many: 'mail hooks' },
  item: MailhookResponseDto,
  body: MailhookBodyDto,
  sortable: 'slug or sys.created_at, optionally followed by asc or desc; default creation order',
  query: { example: { where: { event: 'UserPasswordReset', is_active: true }, select: { name: 1, mail_provider: 1 } }, bodyRequired: false },
}) {
  constructor(mailhooks: MailhooksService) {
    super(mailhooks);
  }
}
