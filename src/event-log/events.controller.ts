import { Controller, Param } from '@nestjs/common';
import type { SchemaObject } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { GetRoute } from '../common/crud/crud-routes';
import { type Listing, ListingRoutes } from '../common/crud/listing-routes';
import type { ListPage, ListRequest } from '../common/query';
import { EVENT_TYPES } from '../events/event-types';
import { EventsService } from './events.service';
import type { EventResponse } from '../events/event.mapper';

const EVENT_SCHEMA: SchemaObject = {
  type: 'object',
  properties: {
    _id: { type: 'string' },
    event_type: { type: 'string', enum: [...EVENT_TYPES], example: 'UserCreated' },
    utilizer_id: { type: 'string', description: 'Id of the user or application that caused the event, or "system"' },
    document: { type: 'object', additionalProperties: true },
    prior: { type: 'object', nullable: true, additionalProperties: true },
    event_time: { type: 'string', format: 'date-time' },
    membership_id: { type: 'string' },
  },
};
const EVENT_SORT = 'event_time, event_type or utilizer_id, optionally followed by asc or desc; default "event_time desc"';

@Controller('memberships/:membershipId/events')
@ListingRoutes({
  tag: 'events',
  permission: 'events.read',
  sortable: EVENT_SORT,
  items: EVENT_SCHEMA,
  list: { summary: 'List events, newest first' },
  query: { summary: 'Query events with where / select', bodyRequired: false },
})
export class EventsController implements Listing {
  constructor(private readonly events: EventsService) {}

  listPage(caller: Caller, { query, ...body }: ListRequest, membershipId: string): Promise<ListPage<Record<string, unknown>>> {
    return this.events.list(caller, membershipId, query, body);
  }

  @GetRoute({ permission: 'events.read', summary: 'Get an event', answer: EVENT_SCHEMA })
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<EventResponse> {
    return this.events.get(membershipId, id);
  }
}
