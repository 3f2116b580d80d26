import { sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { QueryField } from './query-schema';

/** The `sys` bookkeeping columns (database/schema.ts `sysColumns`). */
export interface SysColumns {
  createdAt: PgColumn;
  createdBy: PgColumn;
  modifiedAt: PgColumn;
  modifiedBy: PgColumn;
}

/** The columns every named membership resource starts with (database/schema.ts `namedResource`). */
export interface NamedResourceColumns {
  id: PgColumn;
  name: PgColumn;
  slug: PgColumn;
  description: PgColumn;
}

/**
 * `_id`, `name`, `slug`, `description`: the first fields of a named membership resource's query
 * schema. The slug sorts (its unique index serves it); `_id` sorts only where the API says so.
 * Field order is the order error messages list known fields in, so spread this first.
 */
export function namedResourceFields(table: NamedResourceColumns, options: { sortableId: boolean }): Record<string, QueryField> {
  return {
    _id: { sql: sql`${table.id}`, type: 'string', ...(options.sortableId ? { sortable: true } : {}) },
    name: { sql: sql`${table.name}`, type: 'string' },
    slug: { sql: sql`${table.slug}`, type: 'string', sortable: true },
    description: { sql: sql`${table.description}`, type: 'string' },
  };
}

/** `sys.created_at` ... `sys.modified_by` as fields of their own; creation time sorts (an index serves it inside a membership). */
export function sysFields(table: SysColumns): Record<string, QueryField> {
  return {
    'sys.created_at': { sql: sql`${table.createdAt}`, type: 'timestamp', sortable: true },
    'sys.created_by': { sql: sql`${table.createdBy}`, type: 'string' },
    'sys.modified_at': { sql: sql`${table.modifiedAt}`, type: 'timestamp' },
    'sys.modified_by': { sql: sql`${table.modifiedBy}`, type: 'string' },
  };
}

/** `membership_id` and the `sys` fields: the last fields of every membership resource's query schema. */
export function membershipSysFields(table: SysColumns & { membershipId: PgColumn }): Record<string, QueryField> {
  return {
    membership_id: { sql: sql`${table.membershipId}`, type: 'string' },
    ...sysFields(table),
  };
}
