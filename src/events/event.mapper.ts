import type { EventRow } from '../database/schema';

/** The event record of the specification. */
export interface EventResponse {
  _id: string;
  event_type: string;
  utilizer_id: string;
  document: Record<string, unknown>;
  prior: Record<string, unknown> | null;
  /** UTC, ISO 8601 with milliseconds. */
  event_time: string;
  membership_id: string;
}

/** Built field by field; documents were made secret-free when the event was recorded. */
export function toEventResponse(row: EventRow): EventResponse {
  return {
    _id: row.id,
    event_type: row.eventType,
    utilizer_id: row.utilizerId,
    document: row.document,
    prior: row.prior ?? null,
    event_time: row.eventTime.toISOString(),
    membership_id: row.membershipId,
  };
}
