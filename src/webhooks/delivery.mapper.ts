import type { DeliveryRow, DeliveryStatus } from '../database/schema';

/** A delivery as the API shows it; the lease is the dispatcher's and is never shown. */
export interface DeliveryResponse {
  _id: string;
  membership_id: string;
  webhook_id: string;
  event_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string;
  created_at: string;
  updated_at: string;
  last_status: number | null;
  last_error: string | null;
}

export function toDeliveryResponse(row: DeliveryRow): DeliveryResponse {
  return {
    _id: row.id,
    membership_id: row.membershipId,
    webhook_id: row.webhookId,
    event_id: row.eventId,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.nextAttemptAt.toISOString(),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    last_status: row.lastStatus,
    last_error: row.lastError,
  };
}
