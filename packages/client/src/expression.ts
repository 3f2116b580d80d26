/**
 * Building the permission expression an endpoint requires (pure; no I/O).
 *
 * An expression is `subject.resource.action.object`. Each segment of an endpoint's permission is
 * a template: literal text of the expression alphabet (`A-Z a-z 0-9 _ : % -`), or `*` alone, mixed
 * with placeholders:
 *
 * | placeholder                  | value                                                   |
 * |------------------------------|---------------------------------------------------------|
 * | `{name}` or `{route::name}`  | route parameter (`/orders/:name`)                       |
 * | `{query::name}`              | query-string parameter                                  |
 * | `{header::name}`             | request header (name compared case-insensitively)       |
 * | `{env::name}`                | environment variable of the protected API               |
 *
 * Defaults: subject = the verified caller's `_id`, resource = the last static segment of the route
 * template, action = `*`, object = `*`.
 *
 * Rules (the request is denied, 403 AccessDenied, without a permission call, when one fails):
 * - a query, header or env placeholder without a value (absent, empty, repeated) denies;
 * - a route placeholder whose parameter is absent from the route is KEPT AS WRITTEN. Braces are
 *   outside the expression alphabet, so it is sent percent-encoded: `{id}` becomes the literal
 *   `%7Bid%7D` (and `{route::id}` becomes `%7Broute::id%7D`). That literal is matched only by a
 *   wildcard (`orders.read` / `orders.read.*`) or by a permission naming it, so a controller-wide
 *   `object: '{id}'` works on its list routes for callers allowed on every object;
 * - every resolved value (route, query, header, env, and the caller id used as default subject)
 *   must be non-empty, must not be `*`, must not contain a dot, whitespace or a control
 *   character, also after percent-decoding (`%2E`, `%00`, `%2500`, ...), and must consist of the
 *   expression alphabet only (so no unicode, no quotes, no braces);
 * - the subject segment may not read from query or header: that is a configuration error thrown
 *   by {@link compilePermission} (so at decoration / middleware-creation time), never a runtime
 *   decision.
 */
import { PortcullisConfigError } from './errors';

/** The four segments of an endpoint's permission; each absent one takes its default. */
export interface PermissionTemplate {
  subject?: string;
  resource?: string;
  action?: string;
  object?: string;
}

export type SegmentName = keyof PermissionTemplate;
export type PlaceholderSource = 'route' | 'query' | 'header' | 'env';

type TemplatePart =
  | { kind: 'literal'; text: string }
  | { kind: 'placeholder'; source: PlaceholderSource; name: string; raw: string };

/** One segment template after parsing. */
export interface CompiledSegment {
  readonly template: string;
  readonly parts: readonly TemplatePart[];
}

/** A validated permission template, ready to be resolved for each request. */
export class CompiledPermission {
  /** @internal use {@link compilePermission}. */
  constructor(
    readonly template: Readonly<PermissionTemplate>,
    /** An absent segment takes its default. */
    readonly segments: Readonly<Partial<Record<SegmentName, CompiledSegment>>>,
  ) {}
}

/** What a request offers to the placeholders. */
export interface ExpressionContext {
  /** Verified `_id` of the caller (from the service), the default subject. */
  callerId: string;
  /** Route template, e.g. `/api/orders/:orderId`; the default resource comes from it. */
  routeTemplate?: string | undefined;
  params?: Readonly<Record<string, unknown>> | undefined;
  query?: Readonly<Record<string, unknown>> | undefined;
  headers?: Readonly<Record<string, string | readonly string[] | undefined>> | undefined;
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

export type ExpressionResult =
  | { ok: true; expression: string }
  /** `message` may be shown to the caller; `detail` is for the operator only. */
  | { ok: false; message: string; detail: string };

export const SEGMENT_NAMES: readonly SegmentName[] = ['subject', 'resource', 'action', 'object'];
const SOURCES: readonly PlaceholderSource[] = ['route', 'query', 'header', 'env'];

/** Characters of a literal segment value. */
const ALPHABET = /^[A-Za-z0-9_:%-]+$/;
const PLACEHOLDER_NAME = /^[A-Za-z0-9_.-]+$/;
const FORBIDDEN_IN_VALUE = /[.*\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
/** Most nested percent-encodings checked before a value is given up as suspicious. */
const MAX_DECODE_DEPTH = 4;

function configError(segment: SegmentName, template: string, problem: string): never {
  throw new PortcullisConfigError(
    `Invalid permission ${segment} "${template}": ${problem}`,
  );
}

function parseSegment(segment: SegmentName, template: string): CompiledSegment {
  if (typeof template !== 'string') {
    configError(segment, String(template), 'must be a string.');
  }
  if (template === '') configError(segment, template, 'must not be empty (omit it for the default).');
  if (template === '*') return { template, parts: [{ kind: 'literal', text: '*' }] };

  const parts: TemplatePart[] = [];
  let rest = template;
  while (rest !== '') {
    const open = rest.indexOf('{');
    const close = rest.indexOf('}');
    if (close !== -1 && (open === -1 || close < open)) {
      configError(segment, template, 'has a "}" without "{".');
    }
    if (open === -1) {
      parts.push({ kind: 'literal', text: rest });
      break;
    }
    if (open > 0) parts.push({ kind: 'literal', text: rest.slice(0, open) });
    if (close === -1) configError(segment, template, 'has a "{" without "}".');
    const raw = rest.slice(open, close + 1);
    const inner = rest.slice(open + 1, close);
    if (inner.includes('{')) configError(segment, template, 'has nested braces.');
    parts.push(parsePlaceholder(segment, template, raw, inner));
    rest = rest.slice(close + 1);
  }

  for (const part of parts) {
    if (part.kind === 'literal' && !ALPHABET.test(part.text)) {
      configError(
        segment,
        template,
        `literal "${part.text}" may hold only letters, digits, "_", ":", "%", "-" ` +
          '(or be "*" alone; write a literal dot as %2E).',
      );
    }
    if (part.kind === 'placeholder' && segment === 'subject' &&
        (part.source === 'query' || part.source === 'header')) {
      configError(
        segment,
        template,
        `the subject cannot read from ${part.source} (the caller controls it); ` +
          'use the default (the verified caller id), a route or an env placeholder.',
      );
    }
  }
  return { template, parts };
}

function parsePlaceholder(
  segment: SegmentName,
  template: string,
  raw: string,
  inner: string,
): TemplatePart {
  const separator = inner.indexOf('::');
  const sourceText = separator === -1 ? 'route' : inner.slice(0, separator);
  const name = separator === -1 ? inner : inner.slice(separator + 2);
  const source = SOURCES.find((s) => s === sourceText.toLowerCase());
  if (source === undefined) {
    configError(segment, template, `unknown placeholder source "${sourceText}" (use route, query, header or env).`);
  }
  if (!PLACEHOLDER_NAME.test(name)) {
    configError(segment, template, `placeholder ${raw} needs a name of letters, digits, "_", "-" or ".".`);
  }
  return { kind: 'placeholder', source, name, raw };
}

/**
 * Validates a permission template; throws {@link PortcullisConfigError} for a template that can
 * never produce a valid expression (bad literal, unknown source, subject from query/header...).
 */
export function compilePermission(template: PermissionTemplate = {}): CompiledPermission {
  if (typeof template !== 'object' || template === null) {
    throw new PortcullisConfigError('A permission must be an object {subject?, resource?, action?, object?}.');
  }
  for (const key of Object.keys(template)) {
    if (!(SEGMENT_NAMES as readonly string[]).includes(key)) {
      throw new PortcullisConfigError(
        `Unknown permission segment "${key}" (known: ${SEGMENT_NAMES.join(', ')}).`,
      );
    }
  }
  const segments: Partial<Record<SegmentName, CompiledSegment>> = {};
  for (const name of SEGMENT_NAMES) {
    const value = template[name];
    if (value !== undefined) segments[name] = parseSegment(name, value);
  }
  return new CompiledPermission(Object.freeze({ ...template }), Object.freeze(segments));
}

/**
 * Why a resolved value is refused, or `undefined` when it is acceptable. Checks the value as
 * given and every level of its percent-decoding, so `%2E`, `%00` or `%252E` cannot smuggle in
 * what the plain value may not hold.
 */
export function rejectValue(value: string): string | undefined {
  if (value === '') return 'is empty';
  if (value === '*') return 'is "*"';
  let current = value;
  for (let depth = 0; ; depth += 1) {
    const bad = FORBIDDEN_IN_VALUE.exec(current);
    if (bad !== null) return `contains a forbidden character (${describeChar(bad[0])})`;
    if (!current.includes('%')) break;
    if (depth === MAX_DECODE_DEPTH) return 'is encoded too many times';
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      return 'has a malformed percent-encoding';
    }
    if (decoded === current) break;
    current = decoded;
  }
  if (!ALPHABET.test(value)) return 'contains characters outside A-Z a-z 0-9 _ : % -';
  return undefined;
}

function describeChar(char: string): string {
  if (char === '.') return 'dot';
  if (char === '*') return 'wildcard';
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * The default resource: the last static segment of a route template (`/api/orders/:id` gives
 * `orders`). Parameters (`:id`), wildcards (`*path`) and optional groups (`{/:id}`) are skipped.
 */
export function resourceFromRouteTemplate(routeTemplate: string | undefined): string | undefined {
  if (routeTemplate === undefined) return undefined;
  const withoutGroups = routeTemplate.replace(/\{[^}]*\}/g, '');
  const statics = withoutGroups
    .split('/')
    .filter((s) => s !== '' && !/[:*?+()[\]{}\\]/.test(s));
  return statics.at(-1);
}

/** A header by name, case-insensitively (Node lowercases incoming names; others may not). */
function headerValue(headers: ExpressionContext['headers'], name: string): unknown {
  if (headers === undefined) return undefined;
  const wanted = name.toLowerCase();
  const direct = own(headers, wanted);
  if (direct !== undefined) return direct;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return value;
  }
  return undefined;
}

function own(record: Readonly<Record<string, unknown>> | undefined, name: string): unknown {
  return record !== undefined && Object.prototype.hasOwnProperty.call(record, name)
    ? record[name]
    : undefined;
}

type Resolution = { ok: true; text: string } | { ok: false; message: string; detail: string };

function resolvePlaceholder(
  part: Extract<TemplatePart, { kind: 'placeholder' }>,
  segment: SegmentName,
  ctx: ExpressionContext,
): Resolution {
  let value: unknown;
  switch (part.source) {
    case 'route':
      value = own(ctx.params, part.name);
      // Kept as written: sent as the literal %7B...%7D (braces are outside the alphabet).
      if (value === undefined) return { ok: true, text: encodeBraces(part.raw) };
      break;
    case 'query':
      value = own(ctx.query, part.name);
      break;
    case 'header':
      value = headerValue(ctx.headers, part.name);
      break;
    case 'env':
      value = own(ctx.env, part.name);
      break;
  }
  // env values are the server's business: name them to the operator only.
  const shown = part.source === 'env' ? 'a configured value' : part.raw;
  if (value === undefined || value === '') {
    return {
      ok: false,
      message: `Access denied: ${shown} is required by this endpoint's permission.`,
      detail: `${segment}: ${part.raw} has no value`,
    };
  }
  if (typeof value !== 'string') {
    return {
      ok: false,
      message: `Access denied: ${shown} must be given exactly once.`,
      detail: `${segment}: ${part.raw} is not a single string`,
    };
  }
  const problem = rejectValue(value);
  if (problem !== undefined) {
    return {
      ok: false,
      message: `Access denied: the value of ${shown} is not allowed in a permission.`,
      detail: `${segment}: ${part.raw} ${problem}`,
    };
  }
  return { ok: true, text: value };
}

function encodeBraces(raw: string): string {
  return raw.replace(/\{/g, '%7B').replace(/\}/g, '%7D');
}

function resolveSegment(
  compiled: CompiledSegment,
  segment: SegmentName,
  ctx: ExpressionContext,
): Resolution {
  let text = '';
  for (const part of compiled.parts) {
    if (part.kind === 'literal') {
      text += part.text;
      continue;
    }
    const resolved = resolvePlaceholder(part, segment, ctx);
    if (!resolved.ok) return resolved;
    text += resolved.text;
  }
  return { ok: true, text };
}

function defaultSegment(segment: SegmentName, ctx: ExpressionContext): Resolution {
  switch (segment) {
    case 'subject': {
      const problem = rejectValue(ctx.callerId);
      return problem === undefined
        ? { ok: true, text: ctx.callerId }
        : {
            ok: false,
            message: 'Access denied: the caller id cannot be used in a permission.',
            detail: `subject: caller id ${problem}`,
          };
    }
    case 'resource': {
      const resource = resourceFromRouteTemplate(ctx.routeTemplate);
      if (resource === undefined || !ALPHABET.test(resource)) {
        return {
          ok: false,
          message: 'Access denied: the permission of this endpoint is not configured.',
          detail:
            resource === undefined
              ? `resource: no static segment in route template ${JSON.stringify(ctx.routeTemplate ?? null)}; set "resource"`
              : `resource: route segment "${resource}" is not a valid resource; set "resource"`,
        };
      }
      return { ok: true, text: resource };
    }
    case 'action':
    case 'object':
      return { ok: true, text: '*' };
  }
}

/** Builds the expression `subject.resource.action.object` for one request, or says why not. */
export function buildExpression(
  permission: CompiledPermission,
  ctx: ExpressionContext,
): ExpressionResult {
  const texts: string[] = [];
  for (const segment of SEGMENT_NAMES) {
    const compiled = permission.segments[segment];
    const resolved = compiled === undefined
      ? defaultSegment(segment, ctx)
      : resolveSegment(compiled, segment, ctx);
    if (!resolved.ok) return { ok: false, message: resolved.message, detail: resolved.detail };
    texts.push(resolved.text);
  }
  return { ok: true, expression: texts.join('.') };
}
