import { sql, type Column } from 'drizzle-orm';
import type { FieldType, QueryField, QuerySchema } from './query-schema';

/** The property names under which `source` (a drizzle table, or a subquery's selection) holds columns. */
export type ColumnKey<TSource> = { [K in keyof TSource]: TSource[K] extends Column ? K : never }[keyof TSource] & string;

/**
 * One entry of a field list: a column by its property name, named and typed after the column,
 * or fields given as they are (a group such as `sysFields`, or a field computed from columns).
 */
export type FieldEntry<TSource> = ColumnKey<TSource> | Record<string, QueryField>;

export interface ColumnFieldOptions<TSource> {
  /** The columns `sort` may name: only those an index serves inside the scope of the list. */
  sortable?: readonly ColumnKey<TSource>[];
  /** jsonb columns that hold a list of strings (grant lists, scopes): equality and `$in` mean "contains". */
  stringArrays?: readonly ColumnKey<TSource>[];
  /** Put before each column's name (`sys.`, for the bookkeeping columns the API nests). */
  prefix?: string;
}

/** A column's field name: its SQL name (`try_count`, as the API writes it), and `_id` for the key, as the API calls it. */
function fieldName(column: Column, prefix: string): string {
  return column.name === 'id' ? '_id' : `${prefix}${column.name}`;
}

/** How a column compares, from its drizzle data type. A jsonb list of strings cannot be told from other jsonb at run time, so it is said. */
function fieldType(column: Column, stringArray: boolean): FieldType {
  if (stringArray && column.dataType !== 'json') throw new Error(`column ${column.name} is not jsonb: it cannot be a string array`);
  switch (column.dataType) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'date':
      return 'timestamp';
    case 'number':
      return column.columnType === 'PgInteger' ? 'integer' : 'number';
    case 'json':
      return stringArray ? 'string_array' : 'json';
    default:
      throw new Error(`column ${column.name}: no query field type for drizzle data type ${column.dataType}`);
  }
}

/**
 * The query fields of `entries`, in their order (the order error messages list known fields in).
 * A column's field compares the column itself (sql`${column}`), so an index on it serves the filter.
 */
export function queryFields<TSource>(source: TSource, entries: readonly FieldEntry<TSource>[], options: ColumnFieldOptions<TSource> = {}): Record<string, QueryField> {
  const fields: Record<string, QueryField> = {};
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      Object.assign(fields, entry);
      continue;
    }
    const column = source[entry] as Column;
    fields[fieldName(column, options.prefix ?? '')] = {
      sql: sql`${column}`,
      type: fieldType(column, options.stringArrays?.includes(entry) === true),
      ...(options.sortable?.includes(entry) === true ? { sortable: true } : {}),
    };
  }
  return fields;
}

/** A resource's query schema: the fields of `entries` (see queryFields), and the names no query may use. */
export function querySchema<TSource>(
  source: TSource,
  entries: readonly FieldEntry<TSource>[],
  options: ColumnFieldOptions<TSource> & { hidden?: readonly string[] } = {},
): QuerySchema {
  return { fields: queryFields(source, entries, options), hidden: options.hidden ?? [] };
}
