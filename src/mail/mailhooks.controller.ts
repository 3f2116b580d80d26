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
  tag: 'mailhooks',
  membershipParamOnController: true,
  item: MailhookResponseDto,
  body: MailhookBodyDto,
  sortable: 'slug or sys.created_at, optionally followed by asc or desc; default creation order',
  list: { summary: 'List mail hooks' },
  query: {
    summary: 'Query mail hooks with where / select',
    example: { where: { event: 'UserPasswordReset', is_active: true }, select: { name: 1, mail_provider: 1 } },
    bodyRequired: false,
  },
  get: { summary: 'Get a mail hook' },
  create: { summary: 'Create a mail hook' },
  replace: { summary: 'Replace a mail hook (same body as create); 409 IdenticalDocumentError when nothing changes' },
  delete: { summary: 'Delete a mail hook' },
  deleteMany: { summary: 'Delete several mail hooks: {"ids": [...]} (1..1000)' },
}) {
  constructor(mailhooks: MailhooksService) {
    super(mailhooks);
  }
}
