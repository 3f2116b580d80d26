/**
 * Builds the HTTP request of one webhook call from the webhook's request template and the event
 * (spec "Webhook delivery" 5-7), and masks what a result event may show of it. Pure functions.
 */
import type { WebhookRequestTemplate } from '../database/schema';
import { isCredentialHeader, MASKED_VALUE } from '../events/sanitize';
import { signWebhookBody, WEBHOOK_SIGNATURE_HEADER } from './signature';
import { bodyBudget, type JsonValue, renderBody, renderHeaders, renderUrl, type TemplateContext, urlAndHeadersBudget } from './template';

export interface DeliveryWebhook {
  id: string;
  membershipId: string;
  tryCount: number;
  request: WebhookRequestTemplate;
  /** HMAC key for the signature header; null for unsigned webhooks. */
  secret: string | null;
}

export interface DeliveryEvent {
  id: string;
  membershipId: string;
  eventType: string;
  utilizerId: string;
  document: Record<string, unknown>;
  prior: Record<string, unknown> | null;
  eventTime: Date;
}

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
export function prepareDeliveryRequest(webhook: DeliveryWebhook, event: DeliveryEvent, nowSeconds: number): PreparedRequest {
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
  if (webhook.secret) setHeader(headers, WEBHOOK_SIGNATURE_HEADER, signWebhookBody(webhook.secret, body ?? '', nowSeconds));
  return { method, url, headers, body, skippedHeaders: rendered.skipped };
}

/** Header values a result event may show: credential-carrying ones masked. */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    Object.defineProperty(out, name, {
      value: isCredentialHeader(name) ? MASKED_VALUE : value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

function isCredentialParameter(name: string): boolean {
  return isCredentialHeader(name) || /signature|sig$|auth/i.test(name);
}

/**
 * The URL a result event may show: a password in the user-info part and query parameters whose
 * name suggests a credential (token, secret, key, password, signature, auth) are masked.
 */
export function maskUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  let changed = false;
  if (parsed.password) {
    parsed.password = 'masked';
    changed = true;
  }
  const entries = [...parsed.searchParams.entries()];
  if (entries.some(([name]) => isCredentialParameter(name))) {
    const masked = entries.map(([name, value]): [string, string] => [name, isCredentialParameter(name) ? MASKED_VALUE : value]);
    parsed.search = new URLSearchParams(masked).toString();
    changed = true;
  }
  return changed ? parsed.toString() : url;
}
