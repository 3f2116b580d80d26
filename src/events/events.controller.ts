import { Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import type { ListPage } from '../common/query';
import { EventsService } from './events.service';
import type { EventResponse } from './event.mapper';
import { ApiListParams } from '../common/api-docs';
import { type QueryBody, QueryBodyDto, QueryBodyParam } from '../common/query/query-body';

const EVENT_SCHEMA = {
  type: 'object',
  properties: {
    _id: { type: 'string' },
    event_type: { type: 'string', example: 'UserCreated' },
    utilizer_id: { type: 'string', description: 'Id of the user or application that caused the event, or "system"' },
    document: { type: 'object', additionalProperties: true },
    prior: { type: 'object', nullable: true, additionalProperties: true },
    event_time: { type: 'string', format: 'date-time' },
    membership_id: { type: 'string' },
  },
};
const PAGE_SCHEMA = { type: 'object', properties: { items: { type: 'array', items: EVENT_SCHEMA }, count: { type: 'integer' } } };

const EVENT_SORT = 'event_time, event_type or utilizer_id, optionally followed by asc or desc; default "event_time desc"';

@ApiTags('events')
@ApiAuth()
@ApiParam({ name: 'membershipId' })
@Controller('memberships/:membershipId/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @RequirePermission('events.read')
  @ApiOperation({ summary: 'List events, newest first' })
  @ApiListParams(EVENT_SORT)
  @ApiOkResponse({ schema: PAGE_SCHEMA })
  @ApiErrors(400, 403, 404)
  list(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.events.list(caller, membershipId, query);
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('events.read')
  @ApiOperation({ summary: 'Query events with where / select' })
  @ApiListParams(EVENT_SORT)
  @ApiBody({ type: QueryBodyDto, required: false })
  @ApiOkResponse({ schema: PAGE_SCHEMA })
  @ApiErrors(400, 403, 404)
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.events.list(caller, membershipId, query, body);
  }

  @Get(':id')
  @RequirePermission('events.read', { object: 'id' })
  @ApiOperation({ summary: 'Get an event' })
  @ApiOkResponse({ schema: EVENT_SCHEMA })
  @ApiErrors(403, 404)
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<EventResponse> {
    return this.events.get(membershipId, id);
  }
}
