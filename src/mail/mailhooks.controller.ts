import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import type { ListPage } from '../common/query';
import { ApiListParams, ApiQueryBody } from '../common/api-docs';
import { type QueryBody, QueryBodyParam } from '../common/query/query-body';
import { BulkDeleteAnswerDto, BulkDeleteDto } from '../webhooks/webhook.dto';
import { MailhookBodyDto, MailhookPageDto, MailhookResponseDto } from './mailhook.dto';
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

  @Get()
  @RequirePermission('mailhooks.read')
  @ApiOperation({ summary: 'List mail hooks' })
  @ApiListParams(MAILHOOK_SORT)
  @ApiResponse({ status: 200, type: MailhookPageDto })
  @ApiErrors(400, 403, 404)
  list(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.mailhooks.list(caller, membershipId, query);
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('mailhooks.read')
  @ApiOperation({ summary: 'Query mail hooks with where / select' })
  @ApiListParams(MAILHOOK_SORT)
  @ApiQueryBody({ where: { event: 'UserPasswordReset', is_active: true }, select: { name: 1, mail_provider: 1 } }, false)
  @ApiResponse({ status: 200, type: MailhookPageDto })
  @ApiErrors(400, 403, 404)
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.mailhooks.list(caller, membershipId, query, body);
  }

  @Get(':id')
  @RequirePermission('mailhooks.read', { object: 'id' })
  @ApiOperation({ summary: 'Get a mail hook' })
  @ApiResponse({ status: 200, type: MailhookResponseDto })
  @ApiErrors(403, 404)
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<MailhookResponse> {
    return this.mailhooks.get(membershipId, id);
  }

  @Post()
  @HttpCode(201)
  @RequirePermission('mailhooks.create')
  @ApiOperation({ summary: 'Create a mail hook' })
  @ApiResponse({ status: 201, type: MailhookResponseDto })
  @ApiErrors(400, 403, 404, 409)
  create(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: MailhookBodyDto): Promise<MailhookResponse> {
    return this.mailhooks.create(membershipId, caller, body);
  }

  @Put(':id')
  @RequirePermission('mailhooks.update', { object: 'id' })
  @ApiOperation({ summary: 'Replace a mail hook (same body as create); 409 IdenticalDocumentError when nothing changes' })
  @ApiResponse({ status: 200, type: MailhookResponseDto })
  @ApiErrors(400, 403, 404, 409)
  replace(
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @CurrentCaller() caller: Caller,
    @Body() body: MailhookBodyDto,
  ): Promise<MailhookResponse> {
    return this.mailhooks.replace(membershipId, id, caller, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('mailhooks.delete', { object: 'id' })
  @ApiOperation({ summary: 'Delete a mail hook' })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiErrors(403, 404)
  delete(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    return this.mailhooks.delete(membershipId, id, caller);
  }

  @Delete()
  @HttpCode(200)
  @RequirePermission('mailhooks.delete')
  @ApiOperation({ summary: 'Delete several mail hooks: {"ids": [...]} (1..1000)' })
  @ApiBody({ type: BulkDeleteDto })
  @ApiResponse({ status: 200, type: BulkDeleteAnswerDto })
  @ApiErrors(400, 403, 404)
  deleteMany(
    @Param('membershipId') membershipId: string,
    @CurrentCaller() caller: Caller,
    // Raw: parseBulkIds checks the shape and answers the contract's error.
    @Body() body: unknown,
  ): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.mailhooks.deleteMany(membershipId, caller, body);
  }
}
