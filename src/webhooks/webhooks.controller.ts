import { Controller, UseInterceptors } from '@nestjs/common';
import { MembershipResourceController } from '../common/crud/membership-resource.controller';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';
import { WebhookBodyDto, WebhookResponseDto } from './webhook.dto';
import type { WebhookResponse } from './webhook.mapper';
import { WebhooksService } from './webhooks.service';

@Controller('memberships/:membershipId/webhooks')
@UseInterceptors(EventRecordingInterceptor)
export class WebhooksController extends MembershipResourceController<WebhookBodyDto, WebhookResponse>({
  resource: 'webhooks',
  names: { one: 'a webhook', many: 'webhooks' },
  item: WebhookResponseDto,
  body: WebhookBodyDto,
  sortable: 'slug or sys.created_at, optionally followed by asc or desc; default creation order',
  query: { example: { where: { event: 'UserCreated', status: 'active' }, select: { name: 1, request: 1 } }, bodyRequired: false },
}) {
  constructor(webhooks: WebhooksService) {
    super(webhooks);
  }
}
