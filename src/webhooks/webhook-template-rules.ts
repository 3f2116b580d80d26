/**
 * The rules a webhook's request template must follow to be stored (spec "Webhook",
 * contract "Webhooks"). Pure functions: each answers a problem text, or undefined when valid.
 */
import { EVENT_TYPES, RESULT_EVENT_TYPES } from '../events/event-types';
import { WEBHOOK_SIGNATURE_HEADER } from './signature';
import { findPlaceholders, isKnownPlaceholder, type JsonValue, renderBody, renderUrl, TemplateError, type TemplateContext } from './template';

export const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;
export const WEBHOOK_STATUSES = ['active', 'passive'] as const;
export const MIN_TRY_COUNT = 1;
export const MAX_TRY_COUNT = 5;
export const MAX_URL_LENGTH = 4096;
export const MAX_HEADERS = 50;
export const MAX_HEADER_VALUE_LENGTH = 8192;
export const MIN_SECRET_LENGTH = 16;
export const MAX_SECRET_LENGTH = 256;

/** Event types a webhook may be built on: all but the hook results (each call would trigger the next). */
export const TRIGGER_EVENT_TYPES: readonly string[] = EVENT_TYPES.filter((type) => !RESULT_EVENT_TYPES.includes(type));

/** Headers the service sets itself or that would corrupt the request framing. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-connection',
  WEBHOOK_SIGNATURE_HEADER.toLowerCase(),
]);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;
const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;

const SAMPLE_CONTEXT: TemplateContext = {
  event_type: 'UserCreated',
  utilizer_id: 'sample',
  event_time: '2026-01-01T00:00:00.000Z',
  membership_id: 'sample',
  document: {},
  prior: {},
};

export function eventProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return 'is required: an event type name such as UserCreated';
  if (RESULT_EVENT_TYPES.includes(value as (typeof RESULT_EVENT_TYPES)[number])) {
    return `${value} is a hook result event; a hook on it would trigger itself (not allowed: ${RESULT_EVENT_TYPES.join(', ')})`;
  }
  if (!TRIGGER_EVENT_TYPES.includes(value)) return `is not a known event type: ${JSON.stringify(value.slice(0, 64))}`;
  return undefined;
}

export function methodProblem(value: unknown): string | undefined {
  if (typeof value === 'string' && (WEBHOOK_METHODS as readonly string[]).includes(value.toUpperCase())) return undefined;
  return `must be one of ${WEBHOOK_METHODS.join(', ')}`;
}

function unknownPlaceholder(text: string): string | undefined {
  const unknown = findPlaceholders(text).find((expression) => !isKnownPlaceholder(expression));
  if (unknown === undefined) return undefined;
  return `uses the unknown placeholder {{${unknown.slice(0, 64)}}}; known: {{event_type}}, {{utilizer_id}}, {{event_time}}, {{membership_id}}, {{document.<field>}}, {{prior.<field>}}`;
}

/**
 * The URL template: known placeholders only, and an absolute http(s) URL once every placeholder
 * stands for a sample value. A placeholder can therefore fill a path, a query value or a host
 * label, but cannot decide the scheme or be the whole URL.
 */
export function urlProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return 'is required: an absolute http or https URL';
  if (value.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  const placeholder = unknownPlaceholder(value);
  if (placeholder) return placeholder;
  try {
    renderUrl(value.replace(PLACEHOLDER, 'sample'), SAMPLE_CONTEXT);
  } catch (error) {
    if (error instanceof TemplateError) return `must be an absolute http or https URL after placeholder substitution (${error.message})`;
    throw error;
  }
  return undefined;
}

/**
 * The URL template with a sample in place of each placeholder, when no placeholder stands in the
 * host (undefined otherwise, or when it is no URL): what the outbound policy can judge before any
 * call. A templated host is judged when the call is made. The user-info part may be templated:
 * substituted values are URL-encoded, so they cannot move the host.
 */
export function urlWithFixedHost(template: string): string | undefined {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(template.trim())?.[1];
  if (authority === undefined) return undefined;
  const hostAndPort = authority.slice(authority.lastIndexOf('@') + 1);
  if (hostAndPort.includes('{{')) return undefined;
  return template.replace(PLACEHOLDER, 'sample');
}

/** Headers: an object of name to string; names are HTTP tokens the service does not set itself. */
export function headersProblems(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) return ['must be an object of header name to string value'];
  const names = Object.keys(value);
  if (names.length > MAX_HEADERS) return [`must have at most ${MAX_HEADERS} headers`];
  const problems: string[] = [];
  for (const name of names) {
    const shown = JSON.stringify(name.slice(0, 64));
    const headerValue: unknown = (value as Record<string, unknown>)[name];
    if (!HEADER_NAME.test(name)) problems.push(`header name ${shown} is not a valid HTTP header name`);
    else if (RESERVED_HEADERS.has(name.toLowerCase())) problems.push(`header ${shown} is set by the service and cannot be configured`);
    else if (typeof headerValue !== 'string') problems.push(`header ${shown} must have a string value`);
    else if (headerValue.length > MAX_HEADER_VALUE_LENGTH) problems.push(`header ${shown} must be at most ${MAX_HEADER_VALUE_LENGTH} characters`);
    else if (CONTROL.test(headerValue)) problems.push(`header ${shown} must not contain line breaks or control characters`);
    else {
      const placeholder = unknownPlaceholder(headerValue);
      if (placeholder) problems.push(`header ${shown} ${placeholder}`);
    }
  }
  return problems;
}

function collectStrings(value: unknown, out: string[], depth: number): void {
  if (depth > 64) return; // renderBody reports the depth itself
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value as unknown[]) collectStrings(item, out, depth + 1);
  else if (value !== null && typeof value === 'object') for (const item of Object.values(value)) collectStrings(item, out, depth + 1);
}

/** Body: a JSON object whose string values may hold known placeholders, within the template limits. */
export function bodyProblem(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return 'must be a JSON object';
  const strings: string[] = [];
  collectStrings(value, strings, 0);
  for (const text of strings) {
    const placeholder = unknownPlaceholder(text);
    if (placeholder) return placeholder;
  }
  try {
    renderBody(value as JsonValue, SAMPLE_CONTEXT);
  } catch (error) {
    if (error instanceof TemplateError) return error.message;
    throw error;
  }
  return undefined;
}
