import { sql, type SQL } from 'drizzle-orm';
import { QUERY_LIMITS, invalidQuery, isPlainObject, quote, resolvePath, sortableFieldNames, type ResolvedPath } from './field-path';
import { normalizeIsoTimestamp } from './iso-timestamp';
import type { FieldType, QuerySchema } from './query-schema';

export { QUERY_LIMITS } from './field-path';
export { applyProjection, parseSelect, type Projection } from './projection';
export { parseListParams, type ListParams } from './list-params';

/*
 * The `where` language: a safe subset of MongoDB filters, translated to drizzle SQL.
 * Identifiers come only from the schema; every value from the input is a bound parameter.
 * The SQL text added here is fixed by this file (operators, casts, 'number'/'string'/'null').
 */

type Comparison = '$eq' | '$ne' | '$gt' | '$gte' | '$lt' | '$lte';
type Ordering = '$gt' | '$gte' | '$lt' | '$lte';

const FIELD_OPERATORS = ['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists'] as const;
type FieldOperator = (typeof FIELD_OPERATORS)[number];

const SUPPORTED = '$eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists, $and, $or';

const ORDERING_SQL: Record<Ordering, SQL> = {
  $gt: sql`>`,
  $gte: sql`>=`,
  $lt: sql`<`,
  $lte: sql`<=`,
};

const EXPECTED: Record<FieldType, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  timestamp: 'an ISO 8601 timestamp such as "2026-01-01T00:00:00Z"',
  json: 'a JSON value',
  string_array: 'a string (it matches lists that contain it)',
};

function isFieldOperator(key: string): key is FieldOperator {
  return (FIELD_OPERATORS as readonly string[]).includes(key);
}

function isOrdering(op: FieldOperator): op is Ordering {
  return op === '$gt' || op === '$gte' || op === '$lt' || op === '$lte';
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number') return 'a number';
  if (typeof value === 'boolean') return 'a boolean';
  return 'an unsupported value';
}

function unsupportedOperator(op: string): Error {
  return invalidQuery('where', `operator ${quote(op)} is not supported; supported operators: ${SUPPORTED}`);
}

function joinWith(parts: SQL[], separator: SQL): SQL {
  if (parts.length === 1) return parts[0];
  return sql`(${sql.join(parts, separator)})`;
}

function allOf(parts: SQL[]): SQL {
  return parts.length === 0 ? sql`true` : joinWith(parts, sql` and `);
}

function anyOf(parts: SQL[]): SQL {
  return parts.length === 0 ? sql`false` : joinWith(parts, sql` or `);
}

/** Walks one `where`, counting everything it visits against the documented limits. */
class WhereTranslator {
  private nodes = 0;
  /** A condition compares a field no index serves (whereReadsUnindexed). */
  readsUnindexed = false;

  constructor(private readonly schema: QuerySchema) {}

  /** Counts n more nodes, refusing before the work they would cost is done. */
  private spend(n: number): void {
    this.nodes += n;
    if (this.nodes > QUERY_LIMITS.maxNodes) {
      throw invalidQuery(
        'where',
        `the filter is too large (more than ${QUERY_LIMITS.maxNodes} conditions and values in all)`,
      );
    }
  }

  filter(value: unknown, depth: number): SQL {
    if (depth > QUERY_LIMITS.maxDepth) {
      throw invalidQuery('where', `the filter is nested more than ${QUERY_LIMITS.maxDepth} levels deep`);
    }
    if (!isPlainObject(value)) {
      throw invalidQuery('where', `each filter must be a JSON object, got ${kindOf(value)}`);
    }
    const keys = Object.keys(value);
    this.spend(keys.length);
    const parts: SQL[] = [];
    for (const key of keys) {
      const operand = value[key];
      if (key === '$and' || key === '$or') parts.push(this.logical(key, operand, depth));
      else if (key.startsWith('$')) throw unsupportedOperator(key);
      else parts.push(this.field(key, operand));
    }
    return allOf(parts);
  }

  private logical(op: '$and' | '$or', operand: unknown, depth: number): SQL {
    if (!Array.isArray(operand) || operand.length === 0) {
      throw invalidQuery('where', `${op} takes a non-empty array of filters`);
    }
    this.spend(operand.length);
    const parts = operand.map((item: unknown) => this.filter(item, depth + 1));
    return op === '$and' ? allOf(parts) : anyOf(parts);
  }

  private field(path: string, operand: unknown): SQL {
    const target = resolvePath(this.schema, path, 'where');
    // Sortable fields are the indexed ones; a path inside a json column never is.
    if (target.subPath.length > 0 || target.field.sortable !== true) this.readsUnindexed = true;
    if (!isPlainObject(operand)) return this.compare(target, '$eq', operand);

    const keys = Object.keys(operand);
    const operators = keys.filter((key) => key.startsWith('$'));
    // An object without operators is a value: `{"document": {"a": 1}}` is equality.
    if (operators.length === 0) return this.compare(target, '$eq', operand);
    if (operators.length !== keys.length) {
      throw invalidQuery('where', `the condition on ${quote(path)} mixes operators with plain keys`);
    }
    this.spend(keys.length);
    const parts: SQL[] = [];
    for (const key of keys) {
      if (!isFieldOperator(key)) {
        if (key === '$and' || key === '$or') {
          throw invalidQuery('where', `${key} belongs at filter level, not inside the condition on ${quote(path)}`);
        }
        throw unsupportedOperator(key);
      }
      const value = operand[key];
      if (key === '$exists') parts.push(this.exists(target, value));
      else if (key === '$in' || key === '$nin') parts.push(this.membership(target, key, value));
      else parts.push(this.compare(target, key, value));
    }
    return allOf(parts);
  }

  // ----- operand checks -------------------------------------------------------------------

  private wrongType(target: ResolvedPath, value: unknown, op: string): Error {
    const where = op === '$eq' ? '' : ` (in ${op})`;
    return invalidQuery(
      'where',
      `field ${quote(target.path)} expects ${EXPECTED[target.field.type]}, got ${kindOf(value)}${where}`,
    );
  }

  private checkString(target: ResolvedPath, value: string): void {
    if (value.length > QUERY_LIMITS.maxStringLength) {
      throw invalidQuery(
        'where',
        `a value for ${quote(target.path)} is longer than ${QUERY_LIMITS.maxStringLength} characters`,
      );
    }
  }

  /** A JSON value for a json field: bounded in depth, size and string length. Each element or key counts. */
  private checkJson(target: ResolvedPath, value: unknown, depth: number): void {
    if (typeof value === 'string') return this.checkString(target, value);
    if (value === null || typeof value === 'number' || typeof value === 'boolean') return;
    if (depth >= QUERY_LIMITS.maxValueDepth) {
      throw invalidQuery(
        'where',
        `a value for ${quote(target.path)} is nested more than ${QUERY_LIMITS.maxValueDepth} levels deep`,
      );
    }
    if (Array.isArray(value)) {
      this.spend(value.length);
      for (const item of value) this.checkJson(target, item, depth + 1);
      return;
    }
    if (isPlainObject(value)) {
      const keys = Object.keys(value);
      this.spend(keys.length);
      for (const key of keys) {
        this.checkString(target, key);
        this.checkJson(target, value[key], depth + 1);
      }
      return;
    }
    throw this.wrongType(target, value, '$eq');
  }

  /** A non-null value for a scalar column, as a bound parameter cast where the column type is not enough. */
  private scalarParam(target: ResolvedPath, value: unknown, op: string): SQL {
    const type = target.field.type;
    switch (type) {
      case 'string':
        if (typeof value !== 'string') throw this.wrongType(target, value, op);
        this.checkString(target, value);
        return sql`${value}`;
      case 'integer':
        if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw this.wrongType(target, value, op);
        // bigint: a large value compared with an int4 column must not fail inside the database.
        return sql`${value}::bigint`;
      case 'number':
        if (typeof value !== 'number' || !Number.isFinite(value)) throw this.wrongType(target, value, op);
        return sql`${value}::numeric`;
      case 'boolean':
        if (typeof value !== 'boolean') throw this.wrongType(target, value, op);
        return sql`${value}`;
      case 'timestamp': {
        if (typeof value !== 'string') throw this.wrongType(target, value, op);
        this.checkString(target, value);
        const normalized = normalizeIsoTimestamp(value);
        if (normalized === undefined) {
          throw invalidQuery(
            'where',
            `field ${quote(target.path)} expects ${EXPECTED.timestamp}, got ${quote(value)}`,
          );
        }
        return sql`${normalized}::timestamptz`;
      }
      case 'json':
      case 'string_array':
        throw new Error(`scalarParam called for a ${type} field`);
    }
  }

  private jsonParam(target: ResolvedPath, value: unknown): SQL {
    this.checkJson(target, value, 0);
    return sql`${JSON.stringify(value)}::jsonb`;
  }

  private stringArrayElement(target: ResolvedPath, value: unknown, op: string): string {
    if (typeof value !== 'string') throw this.wrongType(target, value, op);
    this.checkString(target, value);
    return value;
  }

  /** The column, or for a path below a json field the jsonb value at that path. */
  private column(target: ResolvedPath): SQL {
    if (target.subPath.length === 0) return target.field.sql;
    // Segments are restricted to [A-Za-z0-9_-], so quoting each makes a valid text[] literal;
    // it is still a bound parameter, never part of the SQL text.
    const path = `{${target.subPath.map((segment) => `"${segment}"`).join(',')}}`;
    return sql`(${target.field.sql} #> ${path}::text[])`;
  }

  // ----- operators ------------------------------------------------------------------------

  private exists(target: ResolvedPath, value: unknown): SQL {
    if (typeof value !== 'boolean') {
      throw invalidQuery('where', `$exists on ${quote(target.path)} takes true or false, got ${kindOf(value)}`);
    }
    const col = this.column(target);
    return value ? sql`${col} is not null` : sql`${col} is null`;
  }

  private compare(target: ResolvedPath, op: Comparison, value: unknown): SQL {
    const type = target.field.type;
    const col = this.column(target);
    if (value === null) {
      if (op !== '$eq' && op !== '$ne') {
        throw invalidQuery('where', `${op} on ${quote(target.path)} cannot compare with null`);
      }
      // Mongo semantics: null matches a missing value; in a json document that includes JSON null.
      if (type === 'json') {
        return op === '$eq'
          ? sql`(${col} is null or ${col} = 'null'::jsonb)`
          : sql`(${col} is not null and ${col} <> 'null'::jsonb)`;
      }
      return op === '$eq' ? sql`${col} is null` : sql`${col} is not null`;
    }

    if (type === 'json') {
      if (op === '$eq') return sql`${col} = ${this.jsonParam(target, value)}`;
      if (op === '$ne') return sql`${col} is distinct from ${this.jsonParam(target, value)}`;
      // jsonb orders types before values (a boolean is "greater" than any number), so the
      // comparison is limited to values of the operand's own JSON type, as in MongoDB.
      let jsonType: SQL;
      if (typeof value === 'number') jsonType = sql`'number'`;
      else if (typeof value === 'string') jsonType = sql`'string'`;
      else throw invalidQuery('where', `${op} on ${quote(target.path)} takes a number or a string, got ${kindOf(value)}`);
      return sql`(jsonb_typeof(${col}) = ${jsonType} and ${col} ${ORDERING_SQL[op]} ${this.jsonParam(target, value)})`;
    }

    if (type === 'string_array') {
      if (isOrdering(op)) throw invalidQuery('where', `${op} is not supported on the list field ${quote(target.path)}`);
      const contains = JSON.stringify([this.stringArrayElement(target, value, op)]);
      return op === '$eq'
        ? sql`${col} @> ${contains}::jsonb`
        : sql`(${col} is null or not (${col} @> ${contains}::jsonb))`;
    }

    if (type === 'boolean' && isOrdering(op)) {
      throw invalidQuery('where', `${op} is not supported on the boolean field ${quote(target.path)}`);
    }
    const param = this.scalarParam(target, value, op);
    if (op === '$eq') return sql`${col} = ${param}`;
    // Mongo semantics: $ne also matches documents where the field is missing (NULL).
    if (op === '$ne') return sql`${col} is distinct from ${param}`;
    return sql`${col} ${ORDERING_SQL[op]} ${param}`;
  }

  private membership(target: ResolvedPath, op: '$in' | '$nin', values: unknown): SQL {
    if (!Array.isArray(values)) {
      throw invalidQuery('where', `${op} on ${quote(target.path)} takes an array, got ${kindOf(values)}`);
    }
    // Checked before anything is done per value: a huge list is refused at once.
    if (values.length > QUERY_LIMITS.maxInValues) {
      throw invalidQuery(
        'where',
        `${op} on ${quote(target.path)} has more than ${QUERY_LIMITS.maxInValues} values`,
      );
    }
    this.spend(values.length);
    for (const value of values) {
      if (value === null) {
        throw invalidQuery('where', `${op} on ${quote(target.path)} cannot contain null; use $eq: null or $exists`);
      }
    }

    const col = this.column(target);
    const type = target.field.type;
    if (values.length === 0) return op === '$in' ? sql`false` : sql`true`;

    if (type === 'string_array') {
      const elements = values.map((value: unknown) => sql`${this.stringArrayElement(target, value, op)}`);
      const any = sql`${col} ?| array[${sql.join(elements, sql`, `)}]::text[]`;
      return op === '$in' ? any : sql`(${col} is null or not (${any}))`;
    }

    let params: SQL[];
    if (type === 'json') {
      params = values.map((value: unknown) => this.jsonParam(target, value));
    } else {
      params = values.map((value: unknown) => this.scalarParam(target, value, op));
    }
    const list = sql.join(params, sql`, `);
    return op === '$in' ? sql`${col} in (${list})` : sql`(${col} is null or ${col} not in (${list}))`;
  }
}

/**
 * Translates a `where` filter into a SQL condition, or undefined when there is no filter
 * (absent, null or `{}`). Throws DomainError('InvalidQuery') for anything outside the language.
 * The result is parenthesised, so `and(eq(t.membershipId, m), result)` cannot be widened by an `$or`.
 */
export function translateWhere(schema: QuerySchema, where: unknown): SQL | undefined {
  if (where === undefined || where === null) return undefined;
  if (!isPlainObject(where)) throw invalidQuery('where', `must be a JSON object, got ${kindOf(where)}`);
  if (Object.keys(where).length === 0) return undefined;
  const condition = new WhereTranslator(schema).filter(where, 1);
  return sql`(${condition})`;
}

/**
 * Whether a `where` (one translateWhere accepts) compares a field no index serves: a path inside
 * a json column, or a field that is not sortable. The database then evaluates that condition on
 * every row the rest of the filter leaves, and the planner cannot tell how many that is: its
 * estimate for such a condition is a default, so a LIMIT looks cheaper than a filter that matches
 * nothing makes it (runListQuery bounds these where it cannot cancel a statement).
 */
export function whereReadsUnindexed(schema: QuerySchema, where: unknown): boolean {
  if (!isPlainObject(where) || Object.keys(where).length === 0) return false;
  const translator = new WhereTranslator(schema);
  translator.filter(where, 1);
  return translator.readsUnindexed;
}

const MAX_SORT_LENGTH = 200;
const SORT_FORMS = 'sort takes "field", "field asc" or "field desc"';

/**
 * Translates `sort` ("field", "field asc", "field desc") into an ORDER BY expression for a
 * sortable field. The fallback (the resource's default order) is used when there is no sort,
 * and is appended after the requested field as a tie-breaker so that pages do not overlap.
 */
export function translateSort(schema: QuerySchema, sort: unknown, fallback: SQL): SQL {
  if (sort === undefined || sort === null) return fallback;
  if (typeof sort !== 'string') throw invalidQuery('sort', `${SORT_FORMS}, got ${kindOf(sort)}`);
  if (sort.length > MAX_SORT_LENGTH) throw invalidQuery('sort', `is too long; ${SORT_FORMS}`);
  const words = sort.trim().split(/\s+/);
  if (words[0] === '' || words.length > 2) throw invalidQuery('sort', SORT_FORMS);
  const [path, direction = 'asc'] = words;
  const target = resolvePath(schema, path, 'sort');
  const dir = direction.toLowerCase();
  if (dir !== 'asc' && dir !== 'desc') {
    throw invalidQuery('sort', `the direction must be "asc" or "desc", got ${quote(direction)}`);
  }
  if (target.subPath.length > 0 || target.field.sortable !== true) {
    const sortable = sortableFieldNames(schema);
    throw invalidQuery(
      'sort',
      `cannot sort by ${quote(path)}; sortable fields: ${sortable === '' ? '(none)' : sortable}`,
    );
  }
  const order = dir === 'desc' ? sql.raw('desc') : sql.raw('asc');
  // Ties break on _id in the same direction, so pages never overlap and an index on
  // (field, id) serves the order in one scan, forward or backward.
  const id = schema.fields._id;
  if (path === '_id') return sql`${target.field.sql} ${order}`;
  if (id) return sql`${target.field.sql} ${order}, ${id.sql} ${order}`;
  return sql`${target.field.sql} ${order}, ${fallback}`;
}
