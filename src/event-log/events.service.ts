import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError } from '../common/errors';
import type { ListPage } from '../common/query';
import { EventRecorder } from '../events/event-recorder';
import { EventRepository } from '../events/event.repository';
import { toEventResponse, type EventResponse } from '../events/event.mapper';
import type { QueryBody } from '../common/query/query-body';

/**
 * The read-only event log of a membership. Every read first waits for the events this instance
 * was still writing through the group commit when the read came (`EventRecorder.settled`:
 * verifications, webhook and mail results), so a read never misses one that is a moment from stored.
 */
@Injectable()
export class EventsService {
  constructor(
    private readonly events: EventRepository,
    private readonly recorder: EventRecorder,
    private readonly permissions: CallerPermissions,
  ) {}

  async get(membershipId: string, id: string): Promise<EventResponse> {
    await this.recorder.settled();
    const row = await this.events.findById(membershipId, id);
    if (!row) throw new DomainError('EventNotFound', 'The event does not exist');
    return toEventResponse(row);
  }

  /** List and `_query`: without the events a forbidden entry denies the caller reading. */
  async list(caller: Caller, membershipId: string, query: Record<string, unknown>, body: QueryBody = {}): Promise<ListPage<Record<string, unknown>>> {
    const hiddenIds = await this.permissions.hiddenFromLists(caller, 'events');
    await this.recorder.settled();
    return this.events.list(membershipId, { query, ...body, hiddenIds });
  }
}
