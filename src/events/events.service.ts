import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import type { ListPage } from '../common/query';
import { EventRecorder } from './event-recorder';
import { EventRepository } from './event.repository';
import { toEventResponse, type EventResponse } from './event.mapper';
import type { QueryBody } from '../common/query/query-body';

/**
 * The read-only event log of a membership. Every read first waits for the events this instance
 * was still writing when the read came (`EventRecorder.settled`; TokenVerified is written after
 * its answer), so a caller reads its own verifications through the same instance.
 */
@Injectable()
export class EventsService {
  constructor(
    private readonly events: EventRepository,
    private readonly recorder: EventRecorder,
  ) {}

  async get(membershipId: string, id: string): Promise<EventResponse> {
    await this.recorder.settled();
    const row = await this.events.findById(membershipId, id);
    if (!row) throw new DomainError('EventNotFound', 'The event does not exist');
    return toEventResponse(row);
  }

  async list(membershipId: string, query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    await this.recorder.settled();
    return this.events.list(membershipId, { query });
  }

  async query(membershipId: string, query: Record<string, unknown>, body: QueryBody): Promise<ListPage<Record<string, unknown>>> {
    await this.recorder.settled();
    return this.events.list(membershipId, { query, ...body });
  }
}
