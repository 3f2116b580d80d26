import { DomainError } from '../errors';
import type { QueryField, QuerySchema } from './query-schema';

/** The documented limits of the query language. Each is checked before the work it bounds. */
export const QUERY_LIMITS = {
  /** Filter documents nested in one another through `$and`/`$or`; the top-level filter is level 1. */
  maxDepth: 8,
  /** Values in one `$in` or `$nin`. */
  maxInValues: 1000,
  /** Keys and array elements anywhere in one `where`: conditions, operators, `$in` values, parts of json values. */
  maxNodes: 2000,
  /** Characters in one string value. */
  maxStringLength: 1024,
  /** Segments in one dotted field path. */
  maxPathSegments: 10,
  /** Nesting of an object or array given as a value (json fields only). */
  maxValueDepth: 8,
  /** Entries in one `select`. */
  maxSelectPaths: 100,
} as const;

const SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;
/** Longest path that can be valid: every segment at its maximum plus the dots between. */
const MAX_PATH_CHARS = QUERY_LIMITS.maxPathSegments * 65 - 1;
/** How much of a user-supplied name an error message repeats. */
const MAX_ECHO = 64;

export type QueryPart = 'where' | 'sort' | 'select';

export function invalidQuery(part: QueryPart, message: string): DomainError {
  return new DomainError('InvalidQuery', `${part}: ${message}`);
}

/** A user-supplied name, quoted and cut short, safe to put in an error message. */
export function quote(text: string): string {
  return JSON.stringify(text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}...` : text);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export interface ResolvedPath {
  /** The path as the user wrote it, for messages (quote it before use). */
  path: string;
  /** The schema name the path starts with. */
  name: string;
  field: QueryField;
  /** Segments below a json field; empty for the field itself. */
  subPath: string[];
}

function visibleFieldNames(schema: QuerySchema): string {
  const hidden = schema.hidden ?? [];
  return Object.keys(schema.fields)
    .filter((name) => !hidden.includes(name))
    .join(', ');
}

/**
 * Maps a user-supplied path to a schema field plus the json path below it. The longest schema
 * name that is a prefix of the path wins, so `sys.created_at` may be a field of its own while
 * `document.sys.created_at` is a path inside the `document` json field.
 */
export function resolvePath(schema: QuerySchema, path: string, part: QueryPart): ResolvedPath {
  if (path.length === 0) throw invalidQuery(part, 'a field name is empty');
  if (path.length > MAX_PATH_CHARS) throw invalidQuery(part, `field path ${quote(path)} is too long`);
  const segments = path.split('.');
  if (segments.length > QUERY_LIMITS.maxPathSegments) {
    throw invalidQuery(part, `field path ${quote(path)} has more than ${QUERY_LIMITS.maxPathSegments} segments`);
  }

  const hidden = schema.hidden ?? [];
  for (let i = 1; i <= segments.length; i++) {
    const prefix = segments.slice(0, i).join('.');
    if (hidden.includes(prefix)) throw invalidQuery(part, `field ${quote(prefix)} cannot be used in queries`);
  }

  for (let i = segments.length; i >= 1; i--) {
    const name = segments.slice(0, i).join('.');
    if (!Object.hasOwn(schema.fields, name)) continue;
    const field = schema.fields[name];
    const subPath = segments.slice(i);
    if (subPath.length > 0 && field.type !== 'json') {
      throw invalidQuery(part, `field ${quote(name)} has no sub-fields (in ${quote(path)})`);
    }
    for (const segment of subPath) {
      if (!SEGMENT.test(segment)) {
        throw invalidQuery(
          part,
          `field path ${quote(path)} is invalid: each part must be 1 to 64 letters, digits, "_" or "-"`,
        );
      }
    }
    return { path, name, field, subPath };
  }

  throw invalidQuery(part, `unknown field ${quote(path)}; known fields: ${visibleFieldNames(schema)}`);
}

/** The names `sort` accepts, for its error message. */
export function sortableFieldNames(schema: QuerySchema): string {
  const hidden = schema.hidden ?? [];
  return Object.entries(schema.fields)
    .filter(([name, field]) => field.sortable === true && !hidden.includes(name))
    .map(([name]) => name)
    .join(', ');
}
