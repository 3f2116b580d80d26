import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import type { ListPage } from '../common/query';
import { EventRepository } from './event.repository';
import { toEventResponse, type EventResponse } from './event.mapper';
import type { QueryBody } from '../common/query/query-body';

/** The read-only event log of a membership. */
@Injectable()
export class EventsService {
  constructor(private readonly events: EventRepository) {}

  async get(membershipId: string, id: string): Promise<EventResponse> {
    const row = await this.events.findById(membershipId, id);
    if (!row) throw new DomainError('EventNotFound', 'The event does not exist');
    return toEventResponse(row);
  }

  list(membershipId: string, query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.events.list(membershipId, { query });
  }

  query(membershipId: string, query: Record<string, unknown>, body: QueryBody): Promise<ListPage<Record<string, unknown>>> {
    return this.events.list(membershipId, { query, ...body });
  }
}
