import { sql, type Column } from 'drizzle-orm';
import { queryFields, type ColumnKey } from './column-fields';
import type { QueryField } from './query-schema';

/** The `sys` bookkeeping columns (database/schema.ts `sysColumns`). */
export interface SysColumns {
  createdAt: Column;
  createdBy: Column;
  modifiedAt: Column;
  modifiedBy: Column;
}

/** The columns every named membership resource starts with (database/schema.ts `namedResource`). */
export interface NamedResourceColumns {
  id: Column;
  name: Column;
  slug: Column;
  description: Column;
}

/**
 * `_id`, `name`, `slug`, `description`: the first fields of a named membership resource's query
 * schema. The slug sorts (its unique index serves it); `_id` sorts only where the API says so.
 * Field order is the order error messages list known fields in, so list this first.
 */
export function namedResourceFields(table: NamedResourceColumns, options: { sortableId: boolean }): Record<string, QueryField> {
  return queryFields(table, ['id', 'name', 'slug', 'description'], { sortable: options.sortableId ? ['id', 'slug'] : ['slug'] });
}

/**
 * `sys.created_at` ... `sys.modified_by` as fields of their own. Creation time sorts by default (an
 * index serves it inside a membership).
 */
export function sysFields(table: SysColumns, sortable: readonly ColumnKey<SysColumns>[] = ['createdAt']): Record<string, QueryField> {
  return queryFields(table, ['createdAt', 'createdBy', 'modifiedAt', 'modifiedBy'], { prefix: 'sys.', sortable });
}

/** `membership_id` and the `sys` fields: the last fields of every membership resource's query schema. */
export function membershipSysFields(table: SysColumns & { membershipId: Column }): Record<string, QueryField> {
  return { ...queryFields(table, ['membershipId']), ...sysFields(table) };
}

/** Whether a write-only column (a secret) holds a value: what the API shows in its place (`has_secret`). */
export function isSetField(column: Column): QueryField {
  return { sql: sql`(${column} is not null)`, type: 'boolean' };
}
