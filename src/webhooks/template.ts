/**
 * Placeholder substitution with context-specific escaping (spec "Webhook delivery" 5-6), for
 * webhooks now and mail hooks later: nothing here knows about webhooks.
 *
 * Placeholders: {{event_type}}, {{utilizer_id}}, {{event_time}}, {{membership_id}},
 * {{document.<path>}}, {{prior.<path>}}; paths are dotted (`document.sys.created_by`), segments
 * match /^[A-Za-z0-9_-]+$/, spaces inside the braces are allowed (`{{ document.name }}`).
 *
 * - Resolution reads own properties only (no prototype access); arrays accept numeric indexes.
 * - Values: string as is; number/boolean/bigint via String(); Date as ISO text; other
 *   objects/arrays as JSON text; null/undefined/unresolvable as ''.
 * - Substitution is a single pass: a value containing `{{...}}` is inserted literally.
 * - URL: values are encodeURIComponent-ed and the result must be an absolute http(s) URL.
 * - Headers: a header whose value would contain a control character (other than tab) or a
 *   character above U+00FF (which fetch cannot send), or whose name is not a valid HTTP token,
 *   is left out and reported in `skipped`.
 * - Body: only string values are templated; each stays a string, so no value can add fields.
 * - Work is bounded: a template over 64 KiB (UTF-8) or with over 1000 placeholders, or a body
 *   nested deeper than 64 levels, throws TemplateError.
 * - Output is bounded too (contract "Bounded work", Rendered templates): each render charges an
 *   OutputBudget as it goes and stops with TemplateError `TemplateOutputTooLarge` as soon as the
 *   limit is passed, so an over-long result is never built. URL and headers share one budget
 *   (64 KiB), the body has its own (1 MiB, counted as its JSON serialization).
 *
 * Pure functions, no framework imports.
 */

export interface TemplateContext {
  event_type: string;
  utilizer_id: string;
  event_time: string;
  membership_id: string;
  document: unknown;
  prior: unknown;
}

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * TemplateOutputTooLarge: the rendered output would pass its OutputBudget.
 * TemplateInvalid: anything else (template over its own limits, URL not absolute http(s), ...).
 */
export type TemplateErrorCode = 'TemplateInvalid' | 'TemplateOutputTooLarge';

export class TemplateError extends Error {
  constructor(
    message: string,
    readonly code: TemplateErrorCode = 'TemplateInvalid',
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}

/** Maximum size of one template (URL, all headers together, or the whole body), UTF-8 bytes. */
export const TEMPLATE_MAX_BYTES = 64 * 1024;
/** Maximum placeholders in one template (URL, all headers together, or the whole body). */
export const TEMPLATE_MAX_PLACEHOLDERS = 1000;
/** Maximum nesting depth of a body template. */
export const TEMPLATE_MAX_BODY_DEPTH = 64;
/** Maximum rendered size of URL and all headers (names and values) together, UTF-8 bytes. */
export const RENDERED_URL_AND_HEADERS_MAX_BYTES = 64 * 1024;
/** Maximum rendered size of a body, UTF-8 bytes (for a JSON body: of its serialization). */
export const RENDERED_BODY_MAX_BYTES = 1024 * 1024;

/**
 * How many bytes of output one render may still produce. Several renders may share one budget
 * (URL and headers do). Charged while rendering, before a piece joins the output, so a render
 * that would pass the limit stops having built at most `limit` bytes.
 */
export class OutputBudget {
  private used = 0;

  constructor(
    readonly limit: number,
    /** Names the output in the error: "URL and headers", "Body". */
    readonly label: string,
  ) {}

  get usedBytes(): number {
    return this.used;
  }

  get remainingBytes(): number {
    return Math.max(0, this.limit - this.used);
  }

  /** Counts `bytes` more output; throws TemplateOutputTooLarge once past the limit. */
  spend(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limit) {
      throw new TemplateError(`${this.label} would render to more than ${this.limit} bytes (the limit); rendering stopped`, 'TemplateOutputTooLarge');
    }
  }
}

/** A fresh budget for URL and headers together. */
export function urlAndHeadersBudget(): OutputBudget {
  return new OutputBudget(RENDERED_URL_AND_HEADERS_MAX_BYTES, 'URL and headers');
}

/** A fresh budget for a body. */
export function bodyBudget(): OutputBudget {
  return new OutputBudget(RENDERED_BODY_MAX_BYTES, 'Body');
}

const SIMPLE_FIELDS = ['event_type', 'utilizer_id', 'event_time', 'membership_id'] as const;
type SimpleField = (typeof SIMPLE_FIELDS)[number];
const ROOTS = ['document', 'prior'] as const;
type Root = (typeof ROOTS)[number];

const SEGMENT = /^[A-Za-z0-9_-]+$/;
const INDEX = /^(?:0|[1-9][0-9]*)$/;
/**
 * `{{`, then anything without braces, then `}}`. `[^{}]*` cannot backtrack into the closing
 * braces, so matching is linear in the text length.
 */
const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
/**
 * Control characters (C0 except tab, DEL, C1) and anything a ByteString (fetch header value) cannot
 * hold (above U+00FF).
 */
function isUnsendableHeaderValue(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if ((code < 0x20 && code !== 0x09) || (code >= 0x7f && code <= 0x9f) || code > 0xff) return true;
  }
  return false;
}
/** RFC 9110 token. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

interface ParsedExpression {
  root: SimpleField | Root;
  path: string[];
}

function parseExpression(expression: string): ParsedExpression | undefined {
  const trimmed = expression.trim();
  if ((SIMPLE_FIELDS as readonly string[]).includes(trimmed)) {
    return { root: trimmed as SimpleField, path: [] };
  }
  const parts = trimmed.split('.');
  const root = parts[0];
  if (parts.length < 2 || !(ROOTS as readonly string[]).includes(root)) return undefined;
  const path = parts.slice(1);
  if (!path.every((segment) => SEGMENT.test(segment))) return undefined;
  return { root: root as Root, path };
}

/** True for the expressions the service knows (the text between the braces, spaces allowed). */
export function isKnownPlaceholder(expression: string): boolean {
  return parseExpression(expression) !== undefined;
}

/**
 * The expressions used in a text, trimmed, unique, in order of first appearance. Unknown ones are
 * included too (check them with `isKnownPlaceholder`).
 */
export function findPlaceholders(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(PLACEHOLDER)) found.add(match[1].trim());
  return [...found];
}

function walkPath(start: unknown, path: readonly string[]): unknown {
  let current = start;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    if (Array.isArray(current)) {
      if (!INDEX.test(segment)) return undefined;
      const index = Number(segment);
      if (index >= current.length) return undefined;
      current = current[index] as unknown;
    } else {
      if (!Object.prototype.hasOwnProperty.call(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return current;
}

function valueToText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object': {
      if (value === null) return '';
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toISOString();
      try {
        return JSON.stringify(value) ?? '';
      } catch {
        return ''; // circular or not serializable
      }
    }
    default:
      return ''; // undefined, function, symbol
  }
}

/** The text for one expression (without braces); '' when unknown or unresolvable. */
export function resolvePlaceholder(expression: string, ctx: TemplateContext): string {
  const parsed = parseExpression(expression);
  if (!parsed) return '';
  if (parsed.root === 'document' || parsed.root === 'prior') {
    return valueToText(walkPath(ctx[parsed.root], parsed.path));
  }
  return valueToText(ctx[parsed.root]);
}

/** What a template itself may hold (its size and placeholders), as opposed to its output. */
interface TemplateSize {
  bytes: number;
  placeholders: number;
}

function newTemplateSize(): TemplateSize {
  return { bytes: 0, placeholders: 0 };
}

function charge(budget: TemplateSize, text: string, what: string): void {
  budget.bytes += Buffer.byteLength(text, 'utf8');
  if (budget.bytes > TEMPLATE_MAX_BYTES) {
    throw new TemplateError(`${what} template is larger than ${TEMPLATE_MAX_BYTES} bytes`);
  }
  // Counting is linear; stop as soon as the limit is exceeded.
  for (const _match of text.matchAll(PLACEHOLDER)) {
    budget.placeholders++;
    if (budget.placeholders > TEMPLATE_MAX_PLACEHOLDERS) {
      throw new TemplateError(`${what} template has more than ${TEMPLATE_MAX_PLACEHOLDERS} placeholders`);
    }
  }
}

/** How many bytes a piece of text adds to the output. */
export type OutputMeasure = (text: string) => number;

export const utf8Bytes: OutputMeasure = (text) => Buffer.byteLength(text, 'utf8');

/** Characters JSON.stringify escapes (or, for surrogates, may escape). */
// eslint-disable-next-line no-control-regex -- control characters are exactly what JSON escapes
const JSON_ESCAPED = /["\\\u0000-\u001f\uD800-\uDFFF]/;

/**
 * The bytes a text takes inside a JSON string (without the quotes). Pieces measured one by one add
 * up to the whole string's size, except a surrogate pair split between two pieces, which counts
 * more: the budget errs on the safe side.
 */
export const jsonStringBytes: OutputMeasure = (text) =>
  JSON_ESCAPED.test(text) ? Buffer.byteLength(JSON.stringify(text), 'utf8') - 2 : Buffer.byteLength(text, 'utf8');

/**
 * Renders one text: a single pass, so a value's own `{{...}}` is never expanded. Each literal
 * piece and each encoded value is charged to `budget` before it joins the output, so rendering
 * stops at the first piece past the limit. `encode` must never shorten a value (escaping only
 * adds): then a value longer than what is left fails before it is even encoded.
 */
export function renderText(
  text: string,
  ctx: TemplateContext,
  encode: (value: string) => string,
  budget: OutputBudget,
  measure: OutputMeasure = utf8Bytes,
): string {
  return renderTextWith(text, (expression) => resolvePlaceholder(expression, ctx), encode, budget, measure);
}

/**
 * `renderText` with the caller's resolver (mail hooks know more placeholders than webhooks); the
 * same single pass and the same output budget.
 */
export function renderTextWith(
  text: string,
  resolve: (expression: string) => string,
  encode: (value: string) => string,
  budget: OutputBudget,
  measure: OutputMeasure = utf8Bytes,
): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    const literal = text.slice(last, match.index);
    budget.spend(measure(literal));
    out += literal;
    const value = resolve(match[1]);
    // Each output byte stands for at least one UTF-16 unit of the value: too long already.
    if (value.length > budget.remainingBytes) budget.spend(value.length);
    const encoded = encode(value);
    budget.spend(measure(encoded));
    out += encoded;
    last = match.index + match[0].length;
  }
  const tail = text.slice(last);
  budget.spend(measure(tail));
  return out + tail;
}

function encodeUrlValue(value: string): string {
  // encodeURIComponent throws on lone surrogates; replace them like TextEncoder would.
  return encodeURIComponent(value.replace(LONE_SURROGATE, '\uFFFD'));
}

const identity = (value: string): string => value;

/**
 * Renders the URL template with URL-encoded values. Throws TemplateError when the template is too
 * large, the output passes `budget`, or the result is not an absolute http(s) URL. Returns the rendered text unchanged (the
 * WHATWG parser used for the check is the one fetch uses).
 */
export function renderUrl(template: string, ctx: TemplateContext, budget: OutputBudget = urlAndHeadersBudget()): string {
  if (typeof template !== 'string') throw new TemplateError('URL template must be a string');
  charge(newTemplateSize(), template, 'URL');
  const rendered = renderText(template, ctx, encodeUrlValue, budget);
  let url: URL;
  try {
    url = new URL(rendered);
  } catch {
    throw new TemplateError('URL is not an absolute URL after placeholder substitution');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TemplateError(`URL scheme ${url.protocol} is not allowed; use http or https`);
  }
  if (url.hostname === '') throw new TemplateError('URL has no host');
  return rendered;
}

function defineOwn<V>(target: Record<string, V>, key: string, value: V): void {
  // defineProperty, not assignment: a key named "__proto__" stays an ordinary own property.
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Renders header values (raw values, no encoding). Headers that cannot be sent safely are left out
 * and their names listed in `skipped`: a value containing CR, LF or another control character
 * (tab is allowed) or a character above U+00FF, a non-string value, or a name that is not an HTTP
 * token. Throws TemplateError when all headers together exceed the template limits, or when names
 * and rendered values pass `budget` (shared with the URL by a caller that renders both).
 */
export function renderHeaders(
  headers: Record<string, string> | undefined,
  ctx: TemplateContext,
  budget: OutputBudget = urlAndHeadersBudget(),
): { headers: Record<string, string>; skipped: string[] } {
  const out: Record<string, string> = {};
  const skipped: string[] = [];
  if (headers === undefined || headers === null) return { headers: out, skipped };
  if (typeof headers !== 'object' || Array.isArray(headers)) {
    throw new TemplateError('headers must be an object of name to string');
  }
  const size = newTemplateSize();
  const names = Object.keys(headers);
  for (const name of names) {
    const value: unknown = headers[name];
    charge(size, name, 'Headers');
    if (typeof value === 'string') charge(size, value, 'Headers');
  }
  for (const name of names) {
    const value: unknown = headers[name];
    if (typeof value !== 'string' || !HEADER_NAME.test(name)) {
      skipped.push(name);
      continue;
    }
    budget.spend(utf8Bytes(name));
    const rendered = renderText(value, ctx, identity, budget);
    if (isUnsendableHeaderValue(rendered)) {
      skipped.push(name);
      continue;
    }
    defineOwn(out, name, rendered);
  }
  return { headers: out, skipped };
}

function checkBody(value: unknown, depth: number, budget: TemplateSize): void {
  if (depth > TEMPLATE_MAX_BODY_DEPTH) {
    throw new TemplateError(`Body template is nested deeper than ${TEMPLATE_MAX_BODY_DEPTH} levels`);
  }
  if (typeof value === 'string') {
    charge(budget, value, 'Body');
  } else if (Array.isArray(value)) {
    charge(budget, ',', 'Body');
    for (const item of value as unknown[]) checkBody(item, depth + 1, budget);
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      charge(budget, key, 'Body');
      checkBody((value as Record<string, unknown>)[key], depth + 1, budget);
    }
  } else {
    charge(budget, ',', 'Body'); // scalars still cost something
  }
}

/** Charges `budget` exactly what JSON.stringify of the rendered value will write. */
function renderBodyValue(value: JsonValue, ctx: TemplateContext, budget: OutputBudget): JsonValue {
  if (typeof value === 'string') {
    budget.spend(2); // the quotes
    return renderText(value, ctx, identity, budget, jsonStringBytes);
  }
  if (Array.isArray(value)) {
    budget.spend(2 + Math.max(0, value.length - 1)); // brackets and commas
    return value.map((item) => renderBodyValue(item, ctx, budget));
  }
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    budget.spend(2 + Math.max(0, keys.length - 1)); // braces and commas
    const out: { [key: string]: JsonValue } = {};
    for (const key of keys) {
      budget.spend(jsonStringBytes(key) + 3); // quotes and colon
      defineOwn(out, key, renderBodyValue(value[key], ctx, budget));
    }
    return out;
  }
  budget.spend(utf8Bytes(JSON.stringify(value)));
  return value;
}

/**
 * Renders a body template: a new JSON value (the input is never mutated) in which only string
 * values are templated, with raw values that stay inside their string. Keys are not templated.
 * Serialize the result with JSON.stringify. Throws TemplateError when the template exceeds its
 * limits or its serialization would pass `budget`.
 */
export function renderBody(body: JsonValue | undefined, ctx: TemplateContext, budget: OutputBudget = bodyBudget()): JsonValue | undefined {
  if (body === undefined) return undefined;
  checkBody(body, 0, newTemplateSize());
  return renderBodyValue(body, ctx, budget);
}
