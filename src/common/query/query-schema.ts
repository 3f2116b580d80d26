import type { SQL } from 'drizzle-orm';

/**
 * How a field compares:
 * - `string`, `integer`, `number`, `boolean`: the column's own SQL type.
 * - `timestamp`: a timestamptz column; filter values are ISO 8601 strings compared as time.
 * - `json`: a jsonb column; dotted paths below it (`document.sys.created_by`) compare as jsonb.
 * - `string_array`: a jsonb array of strings (permissions); equality and `$in` mean "contains".
 */
export type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'timestamp' | 'json' | 'string_array';

export interface QueryField {
  /**
   * The column expression, supplied by the repository: sql`${table.eventType}`.
   * String values are bound without a cast, so the column's type decides; for a uuid or enum
   * column give sql`${table.col}::text` so that a malformed value cannot fail inside the database.
   */
  sql: SQL;
  type: FieldType;
  /** Only these may be used in `sort` (they are indexed). */
  sortable?: boolean;
}

/**
 * The fields a resource exposes to `where`, `sort` and `select`, by their API names. A name may
 * itself contain dots (`sys.created_at`) when a nested response field is a column of its own.
 */
export interface QuerySchema {
  fields: Record<string, QueryField>;
  /** Names that exist but must never be filtered, sorted or selected (password_hash, secret_digest...). */
  hidden?: readonly string[];
}
