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
  tag: 'webhooks',
  membershipParamOnController: true,
  item: WebhookResponseDto,
  body: WebhookBodyDto,
  sortable: 'slug or sys.created_at, optionally followed by asc or desc; default creation order',
  list: { summary: 'List webhooks' },
  query: {
    summary: 'Query webhooks with where / select',
    example: { where: { event: 'UserCreated', status: 'active' }, select: { name: 1, request: 1 } },
    bodyRequired: false,
  },
  get: { summary: 'Get a webhook' },
  create: { summary: 'Create a webhook' },
  replace: { summary: 'Replace a webhook (same body as create); 409 IdenticalDocumentError when nothing changes' },
  delete: { summary: 'Delete a webhook' },
  deleteMany: { summary: 'Delete several webhooks: {"ids": [...]} (1..1000)' },
}) {
  constructor(webhooks: WebhooksService) {
    super(webhooks);
  }
}
