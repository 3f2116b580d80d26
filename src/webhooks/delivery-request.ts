/**
 * Builds the HTTP request of one webhook call from the webhook's request template and the event
 * (spec "Webhook delivery" 5-7), and masks what a result event may show of it. Pure functions.
 */
import type { EventRow, WebhookRow } from '../database/schema';
import { isCredentialHeader, MASKED_VALUE } from '../events/sanitize';
import { signWebhookBody, WEBHOOK_SIGNATURE_HEADER } from './signature';
import { bodyBudget, type JsonValue, renderBody, renderHeaders, renderUrl, type TemplateContext, urlAndHeadersBudget } from './template';

/** What a call needs of its webhook; `secret` is the HMAC key of the signature header (null: unsigned). */
export type DeliveryWebhook = Pick<WebhookRow, 'id' | 'membershipId' | 'tryCount' | 'request' | 'secret'>;

/** The committed event a call is made for, as recorded. */
export type DeliveryEvent = Pick<EventRow, 'id' | 'membershipId' | 'eventType' | 'utilizerId' | 'document' | 'prior' | 'eventTime'>;

export interface PreparedRequest {
  method: string;
  url: string;
  /** Exactly the headers sent (configured ones after substitution, plus the service's own). */
  headers: Record<string, string>;
  /** The serialized body, absent for GET/HEAD and for an uncovered webhook without a body. */
  body?: string;
  /** Configured headers left out because their value could not be sent safely (e.g. a line break). */
  skippedHeaders: string[];
}

export const USER_AGENT = 'Portcullis-Webhook/1';
/** The delivery's id, the same on every attempt and redelivery: receivers de-duplicate by it. */
export const DELIVERY_ID_HEADER = 'X-Webhook-Delivery';
/** Methods that carry no body (fetch refuses one). */
const BODYLESS = new Set(['GET', 'HEAD']);

export function templateContextOf(event: DeliveryEvent): TemplateContext {
  return {
    event_type: event.eventType,
    utilizer_id: event.utilizerId,
    event_time: event.eventTime.toISOString(),
    membership_id: event.membershipId,
    document: event.document,
    prior: event.prior,
  };
}

function setHeader(headers: Record<string, string>, name: string, value: string): void {
  // Header names are case-insensitive: the service's own header replaces a configured one.
  for (const existing of Object.keys(headers)) {
    if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
  }
  headers[name] = value;
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((existing) => existing.toLowerCase() === name.toLowerCase());
}

/**
 * Renders URL, headers and body. Throws TemplateError when the webhook cannot be called (the URL
 * does not render to an absolute http(s) URL, a template is over its limits, URL and headers
 * together or the configured body would render past their limits): that attempt fails without a
 * request being sent. The body limit bounds what the template renders (the payload, or the whole
 * body when uncovered); the event's document and prior around it are bounded by the event itself.
 */
export function prepareDeliveryRequest(webhook: DeliveryWebhook, event: DeliveryEvent, nowSeconds: number, deliveryId?: string): PreparedRequest {
  const ctx = templateContextOf(event);
  const template = webhook.request;
  const method = template.method.toUpperCase();
  const urlAndHeaders = urlAndHeadersBudget();
  const url = renderUrl(template.url, ctx, urlAndHeaders);
  const rendered = renderHeaders(template.headers, ctx, urlAndHeaders);
  const headers: Record<string, string> = { ...rendered.headers };

  let body: string | undefined;
  if (!BODYLESS.has(method)) {
    const payload = renderBody(template.body as JsonValue | undefined, ctx, bodyBudget());
    if (template.uncoveredBody) {
      if (payload !== undefined) body = JSON.stringify(payload);
    } else {
      body = JSON.stringify({ document: event.document, prior: event.prior ?? null, payload: payload ?? null });
    }
  }
  if (body !== undefined && !hasHeader(headers, 'content-type')) setHeader(headers, 'Content-Type', 'application/json');
  if (!hasHeader(headers, 'user-agent')) setHeader(headers, 'User-Agent', USER_AGENT);
  if (deliveryId !== undefined) setHeader(headers, DELIVERY_ID_HEADER, deliveryId);
  if (webhook.secret) setHeader(headers, WEBHOOK_SIGNATURE_HEADER, signWebhookBody(webhook.secret, body ?? '', nowSeconds));
  return { method, url, headers, body, skippedHeaders: rendered.skipped };
}

/**
 * Header values an event may show (result events, and the webhook's own configuration events):
 * credential-carrying ones masked.
 */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    Object.defineProperty(out, name, {
      // The signature too: with the event (the body) it is a request a reader could replay to the receiver.
      value: isCredentialHeader(name) || name.toLowerCase() === WEBHOOK_SIGNATURE_HEADER.toLowerCase() ? MASKED_VALUE : value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** A masked user name or password (brackets cannot stand in a URL's user info). */
const MASKED_USERINFO = 'masked';
/** MASKED_VALUE as it stands in a query. */
const MASKED_QUERY_VALUE = encodeURIComponent(MASKED_VALUE);
/**
 * A scheme (after the spaces and controls URL parsers drop), the slashes after it, then the
 * authority. Text without it has no user info to mask.
 */
// eslint-disable-next-line no-control-regex -- leading controls are what URL parsers strip
const URL_HEAD = /^([\u0000-\u0020]*[A-Za-z][A-Za-z0-9+.-]*:[/\\]*)([^/?#\\]*)/;

function maskAuthority(authority: string): string {
  // As URL parsers do: the user info ends at the last `@`, the password starts at its first `:`.
  const at = authority.lastIndexOf('@');
  if (at < 0) return authority;
  const userinfo = authority.slice(0, at);
  const colon = userinfo.indexOf(':');
  const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
  const password = colon < 0 ? undefined : userinfo.slice(colon + 1);
  const masked = (user ? MASKED_USERINFO : '') + (password === undefined ? '' : `:${password ? MASKED_USERINFO : ''}`);
  return masked + authority.slice(at);
}

function maskQuery(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      if (pair === '') return pair;
      const equals = pair.indexOf('=');
      // A bare item may be the credential itself (`?<api key>`).
      return equals < 0 ? MASKED_QUERY_VALUE : `${pair.slice(0, equals + 1)}${MASKED_QUERY_VALUE}`;
    })
    .join('&');
}

/** The masking done on the text, so that placeholders and everything else stay as written. */
function maskUrlText(url: string): string {
  const head = URL_HEAD.exec(url);
  const start = head ? head[1] + maskAuthority(head[2]) : '';
  const rest = head ? url.slice(head[0].length) : url;
  const hash = rest.indexOf('#');
  const beforeHash = hash < 0 ? rest : rest.slice(0, hash);
  const fragment = hash < 0 ? '' : rest.slice(hash);
  const question = beforeHash.indexOf('?');
  if (question < 0) return start + rest;
  return `${start}${beforeHash.slice(0, question + 1)}${maskQuery(beforeHash.slice(question + 1))}${fragment}`;
}

/** True when a URL parser would still find an unmasked user info or query value in `text`. */
function showsCredentials(text: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return false;
  }
  if ((parsed.username && parsed.username !== MASKED_USERINFO) || (parsed.password && parsed.password !== MASKED_USERINFO)) return true;
  for (const [name, value] of parsed.searchParams) {
    if (value === '' ? name !== MASKED_VALUE : value !== MASKED_VALUE) return true;
  }
  return false;
}

/**
 * The URL an event may show (result events, and the webhook's own configuration events; contract
 * "Secrets in webhook URLs"): the user info (name and password) and every query value masked,
 * since a receiver's credential can hide under any parameter name. The rest is kept as written,
 * placeholders included. Should the text masking miss something a URL parser would find (an odd
 * spelling such as a tab inside the scheme), the parsed URL is masked and shown instead.
 */
export function maskUrl(url: string): string {
  const masked = maskUrlText(url);
  if (!showsCredentials(masked)) return masked;
  const parsed = new URL(masked);
  if (parsed.username) parsed.username = MASKED_USERINFO;
  if (parsed.password) parsed.password = MASKED_USERINFO;
  if (parsed.search) parsed.search = maskQuery(parsed.search.slice(1));
  return parsed.toString();
}
