import { DomainError } from '../common/errors';

/**
 * A permission expression `subject.resource.action.object` (see the API contract, "Permissions").
 *
 * Parsing normalizes, so two spellings of the same permission give the same `toString()`:
 * - missing leading segments become `*` (3 = resource.action.object, 2 = resource.action, 1 = resource);
 * - `resource` and `action` are lower-cased (they compare case-insensitively);
 * - percent-escapes get upper-case hex digits (`%2e` -> `%2E`);
 * - escapes of characters that may appear literally (letters, digits, `-`, `_`, `:`) are decoded
 *   (`%41` -> `A`), so every value has exactly one spelling and a forbidden entry cannot be dodged
 *   by escaping a character that did not need it.
 *
 * `%2A` is a literal star, never a wildcard. No trimming is done: whitespace anywhere is invalid.
 */

/** The four segments as plain data; `PermissionExpression` satisfies it. */
export interface PermissionSegments {
  readonly subject: string;
  readonly resource: string;
  readonly action: string;
  readonly object: string;
}

/** Longest accepted expression, both as given and in its normalized 4-segment form. */
export const MAX_PERMISSION_LENGTH = 512;

export const WILDCARD = '*';

const SEGMENT_NAMES = ['subject', 'resource', 'action', 'object'] as const;
type SegmentName = (typeof SEGMENT_NAMES)[number];

const CASE_INSENSITIVE: ReadonlySet<SegmentName> = new Set<SegmentName>(['resource', 'action']);

/** One or more literal characters or `%XX` escapes. Alternatives start with distinct characters: no backtracking blow-up. */
const LITERAL_SEGMENT = /^(?:[A-Za-z0-9_:-]|%[0-9A-Fa-f]{2})+$/;
const SEGMENT_TOKEN = /%([0-9A-Fa-f]{2})|[A-Za-z0-9_:-]/g;
const UNRESERVED_CHAR = /^[A-Za-z0-9_:-]$/;

type Result<T> = { ok: true; value: T } | { ok: false; message: string };

function normalizeSegment(name: SegmentName, raw: string): Result<string> {
  if (raw === WILDCARD) return { ok: true, value: WILDCARD };
  if (raw.length === 0) return { ok: false, message: `${name} segment is empty` };
  if (!LITERAL_SEGMENT.test(raw)) {
    return {
      ok: false,
      message: `${name} segment must be '*' or letters, digits, '-', '_', ':' and %XX escapes`,
    };
  }
  const lower = CASE_INSENSITIVE.has(name);
  // No escapes (nearly always): only case folding is left to do, without a callback per character.
  if (!raw.includes('%')) return { ok: true, value: lower ? raw.toLowerCase() : raw };
  const value = raw.replace(SEGMENT_TOKEN, (token: string, hex: string | undefined) => {
    if (hex === undefined) return lower ? token.toLowerCase() : token;
    const decoded = String.fromCharCode(parseInt(hex, 16));
    if (UNRESERVED_CHAR.test(decoded)) return lower ? decoded.toLowerCase() : decoded;
    return `%${hex.toUpperCase()}`;
  });
  return { ok: true, value };
}

function buildSegments(parts: Record<SegmentName, unknown>): Result<PermissionSegments> {
  const out: Record<SegmentName, string> = { subject: WILDCARD, resource: WILDCARD, action: WILDCARD, object: WILDCARD };
  for (const name of SEGMENT_NAMES) {
    const raw = parts[name];
    if (typeof raw !== 'string') return { ok: false, message: `${name} segment must be a string` };
    const result = normalizeSegment(name, raw);
    if (!result.ok) return result;
    out[name] = result.value;
  }
  const length = out.subject.length + out.resource.length + out.action.length + out.object.length + 3;
  if (length > MAX_PERMISSION_LENGTH) {
    return { ok: false, message: `permission must be at most ${MAX_PERMISSION_LENGTH} characters` };
  }
  return { ok: true, value: out };
}

function parseText(text: unknown): Result<PermissionSegments> {
  if (typeof text !== 'string') return { ok: false, message: 'permission must be a string' };
  if (text.length === 0) return { ok: false, message: 'permission is empty' };
  if (text.length > MAX_PERMISSION_LENGTH) {
    return { ok: false, message: `permission must be at most ${MAX_PERMISSION_LENGTH} characters` };
  }
  const segments = text.split('.');
  if (segments.length > 4) return { ok: false, message: 'permission has more than 4 segments' };
  // 4 = subject.resource.action.object; fewer drop the subject and then fill from the right:
  // 3 = resource.action.object, 2 = resource.action, 1 = resource. Missing segments are '*'.
  const [subject, rest] = segments.length === 4 ? [segments[0], segments.slice(1)] : [WILDCARD, segments];
  return buildSegments({
    subject,
    resource: rest[0] ?? WILDCARD,
    action: rest[1] ?? WILDCARD,
    object: rest[2] ?? WILDCARD,
  });
}

function invalid(message: string): DomainError {
  return new DomainError('InvalidPermission', `Invalid permission: ${message}`);
}

/** True when `have` grants what `need` asks for: per segment, `have` is `*` or equal. A `*` in `need` is covered only by `*`. */
export function segmentsCover(have: PermissionSegments, need: PermissionSegments): boolean {
  return (
    (have.subject === WILDCARD || have.subject === need.subject) &&
    (have.resource === WILDCARD || have.resource === need.resource) &&
    (have.action === WILDCARD || have.action === need.action) &&
    (have.object === WILDCARD || have.object === need.object)
  );
}

export class PermissionExpression implements PermissionSegments {
  readonly subject: string;
  readonly resource: string;
  readonly action: string;
  readonly object: string;

  private constructor(segments: PermissionSegments) {
    this.subject = segments.subject;
    this.resource = segments.resource;
    this.action = segments.action;
    this.object = segments.object;
    Object.freeze(this);
  }

  /** Parses and normalizes; throws `DomainError('InvalidPermission')` for anything invalid (non-strings included). */
  static parse(text: string): PermissionExpression {
    const result = parseText(text);
    if (!result.ok) throw invalid(result.message);
    return new PermissionExpression(result.value);
  }

  /** Like `parse`, but answers null instead of throwing; accepts any input. */
  static tryParse(text: unknown): PermissionExpression | null {
    const result = parseText(text);
    return result.ok ? new PermissionExpression(result.value) : null;
  }

  /** Builds from parts; a missing (undefined) part is `*`. Each part is validated and normalized like a parsed segment. */
  static of(parts: { subject?: string; resource?: string; action?: string; object?: string }): PermissionExpression {
    const result = buildSegments({
      subject: parts.subject ?? WILDCARD,
      resource: parts.resource ?? WILDCARD,
      action: parts.action ?? WILDCARD,
      object: parts.object ?? WILDCARD,
    });
    if (!result.ok) throw invalid(result.message);
    return new PermissionExpression(result.value);
  }

  /** A copy with another subject (validated; throws `InvalidPermission`). */
  withSubject(subject: string): PermissionExpression {
    return PermissionExpression.of({ subject, resource: this.resource, action: this.action, object: this.object });
  }

  /** Wildcard-aware: `users.read` covers `users.read.abc`; `users.read.abc` does not cover `users.read`; `users.read` does not cover `users.*`. */
  covers(required: PermissionExpression): boolean {
    return segmentsCover(this, required);
  }

  equals(other: PermissionExpression): boolean {
    return this.toString() === other.toString();
  }

  /** Normalized, always 4 segments. `parse(x.toString())` gives an equal expression. */
  toString(): string {
    return `${this.subject}.${this.resource}.${this.action}.${this.object}`;
  }

  toJSON(): string {
    return this.toString();
  }
}

/**
 * Turns an arbitrary value (for example a route `{id}`) into a literal segment: characters other than
 * letters, digits, `-`, `_` and `:` become `%XX` escapes of their UTF-8 bytes (`.` -> `%2E`, `*` -> `%2A`).
 * The empty string stays empty (and is still invalid as a segment).
 */
export function escapePermissionSegment(value: string): string {
  let out = '';
  for (const char of value) {
    if (UNRESERVED_CHAR.test(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
