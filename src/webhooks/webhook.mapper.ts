import type { WebhookRow } from '../database/schema';
import { toSys, type Sys } from '../common/sys';
import { maskHeaders, maskUrl } from './delivery-request';

export interface WebhookRequestResponse {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
  uncoveredBody: boolean;
}

/** The fields a hook on an event answers first, webhook or mail hook: who it is and the event type it fires on. */
export interface EventHookHead {
  _id: string;
  name: string;
  slug: string;
  description: string | null;
  event: string;
}

export interface WebhookResponse extends EventHookHead {
  status: 'active' | 'passive';
  try_count: number;
  request: WebhookRequestResponse;
  /** The secret is write-only; this says whether one is set. */
  has_secret: boolean;
  membership_id: string;
  sys: Sys;
}

/**
 * The head of every event hook's answer and configuration event, in this order: mail hooks fire on
 * the webhooks' trigger events (TRIGGER_EVENT_TYPES) and answer their head as webhooks do.
 */
export function eventHookHead(row: Pick<WebhookRow, 'id' | 'name' | 'slug' | 'description' | 'event'>): EventHookHead {
  return { _id: row.id, name: row.name, slug: row.slug, description: row.description, event: row.event };
}

/** Built field by field: the signing secret has no path into a response or an event. */
export function toWebhookResponse(row: WebhookRow): WebhookResponse {
  return {
    ...eventHookHead(row),
    status: row.status,
    try_count: row.tryCount,
    request: {
      method: row.request.method,
      url: row.request.url,
      headers: row.request.headers ?? {},
      body: (row.request.body as Record<string, unknown> | undefined) ?? null,
      uncoveredBody: row.request.uncoveredBody === true,
    },
    has_secret: row.secret !== null && row.secret !== '',
    membership_id: row.membershipId,
    sys: toSys(row),
  };
}

/**
 * The webhook as its configuration events (WebhookCreated/Updated/Deleted) show it: URL user info,
 * query values and credential headers masked exactly as in the result events (contract "Secrets in
 * webhook URLs"). GET shows the webhook unmasked to `webhooks.read`.
 */
export function toWebhookEventDocument(row: WebhookRow): WebhookResponse {
  const response = toWebhookResponse(row);
  return { ...response, request: { ...response.request, url: maskUrl(response.request.url), headers: maskHeaders(response.request.headers) } };
}
