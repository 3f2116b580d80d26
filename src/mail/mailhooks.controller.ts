import { Body, Controller, Param, Query, UseInterceptors } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller } from '../common/access-decorators';
import { ApiAuth } from '../common/openapi';
import type { ListPage } from '../common/query';
import { BulkDeleteRoute, CreateRoute, DeleteRoute, GetRoute, ListRoute, QueryRoute, ReplaceRoute } from '../common/crud/crud-routes';
import { type QueryBody, QueryBodyParam } from '../common/query/query-body';
import { MailhookBodyDto, MailhookResponseDto } from './mailhook.dto';
import type { MailhookResponse } from './mailhook.mapper';
import { MailhooksService } from './mailhooks.service';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';

const MAILHOOK_SORT = 'slug or sys.created_at, optionally followed by asc or desc; default creation order';

@ApiTags('mailhooks')
@ApiAuth()
@ApiParam({ name: 'membershipId' })
@Controller('memberships/:membershipId/mailhooks')
@UseInterceptors(EventRecordingInterceptor)
export class MailhooksController {
  constructor(private readonly mailhooks: MailhooksService) {}

  @ListRoute({ permission: 'mailhooks.read', summary: 'List mail hooks', sortable: MAILHOOK_SORT, items: MailhookResponseDto })
  list(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.mailhooks.list(caller, membershipId, query);
  }

  @QueryRoute({
    permission: 'mailhooks.read',
    summary: 'Query mail hooks with where / select',
    sortable: MAILHOOK_SORT,
    items: MailhookResponseDto,
    example: { where: { event: 'UserPasswordReset', is_active: true }, select: { name: 1, mail_provider: 1 } },
    bodyRequired: false,
  })
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.mailhooks.list(caller, membershipId, query, body);
  }

  @GetRoute({ permission: 'mailhooks.read', summary: 'Get a mail hook', answer: MailhookResponseDto })
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<MailhookResponse> {
    return this.mailhooks.get(membershipId, id);
  }

  @CreateRoute({ permission: 'mailhooks.create', summary: 'Create a mail hook', answer: MailhookResponseDto })
  create(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: MailhookBodyDto): Promise<MailhookResponse> {
    return this.mailhooks.create(membershipId, caller, body);
  }

  @ReplaceRoute({
    permission: 'mailhooks.update',
    summary: 'Replace a mail hook (same body as create); 409 IdenticalDocumentError when nothing changes',
    answer: MailhookResponseDto,
  })
  replace(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller, @Body() body: MailhookBodyDto): Promise<MailhookResponse> {
    return this.mailhooks.replace(membershipId, id, caller, body);
  }

  @DeleteRoute({ permission: 'mailhooks.delete', summary: 'Delete a mail hook' })
  delete(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    return this.mailhooks.delete(membershipId, id, caller);
  }

  @BulkDeleteRoute({ permission: 'mailhooks.delete', summary: 'Delete several mail hooks: {"ids": [...]} (1..1000)' })
  deleteMany(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: unknown): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.mailhooks.deleteMany(membershipId, caller, body);
  }
}
