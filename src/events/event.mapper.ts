import type { EventRow } from '../database/schema';
import { isoFromTimestamptzText } from '../database/timestamptz-text';

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

/**
 * toEventResponse from the row as the driver gives it: the `events` table's columns in schema
 * order (EVENT_ROW_COLUMNS), JSON parsed, `event_time` as PostgreSQL's text. What events pages
 * read (ListQuery `readRow`), without Drizzle's row object in between.
 */
export function readEventRow(values: unknown[]): EventResponse {
  const [id, membershipId, eventType, utilizerId, document, prior, eventTime] = values as [
    string,
    string,
    string,
    string,
    Record<string, unknown>,
    Record<string, unknown> | null,
    string,
  ];
  return {
    _id: id,
    event_type: eventType,
    utilizer_id: utilizerId,
    document,
    prior: prior ?? null,
    event_time: isoFromTimestamptzText(eventTime),
    membership_id: membershipId,
  };
}

/** The order readEventRow reads the columns in (a spec holds it to the schema's). */
export const EVENT_ROW_COLUMNS = ['id', 'membershipId', 'eventType', 'utilizerId', 'document', 'prior', 'eventTime'] as const;
