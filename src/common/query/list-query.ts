import { and, inArray, notInArray, type Placeholder, sql, type SQL } from 'drizzle-orm';
import { type PgColumn, type PgTable, unionAll } from 'drizzle-orm/pg-core';
import { cannotCancelStatements, type Executor, isStatementCancelled, queryRows } from '../../database/database';
import { DomainError } from '../errors';
import { isPossibleId } from '../ids';
import type { QuerySchema } from './query-schema';
import { isPlainObject } from './field-path';
import { applyProjection, type ListParams, parseListParams, parseSelect, translateSort, translateWhere, whereReadsUnindexed } from './translate';

/** What a list or `_query` request carries: the query string, and for `_query` a body. */
export interface ListRequest {
  query: Record<string, unknown>;
  where?: unknown;
  select?: unknown;
  /** Ids left out of the page and the count: those the caller is denied reading by a forbidden entry. */
  hiddenIds?: readonly string[];
}

/** The contract's list answer: `count` only when `with_count=true`. */
export interface ListPage<T> {
  items: T[];
  count?: number;
}

export interface ListQuery<TRow> {
  executor: Executor;
  table: PgTable;
  /** The tenant condition (membership id); a `where` is ANDed under it and cannot widen it. */
  scope: SQL;
  schema: QuerySchema;
  request: ListRequest;
  /** Order when the request gives no `sort`, and the tie-breaker when it does. */
  defaultSort: SQL;
  toResponse: (row: TRow) => object;
  /**
   * The same answer as `toResponse`, read from the row as the driver gives it (the table's columns
   * in schema order, JSON parsed, timestamps as text) when a page statement kept by shape runs:
   * no Drizzle row object in between. Optional; its spec must show both answer alike.
   */
  readRow?: (values: unknown[]) => object;
  /**
   * A field with an index on (scope, field, default order). In the default order, `$in` on it
   * runs as a UNION ALL of one query per value, each an ordered index scan that reads at most
   * the rows the page could take. One IN list cannot be read in that order from any index: the
   * plain query scans the whole scope newest first and skips every row of the other values.
   * `resultOrder` is the default order by output column names (it sorts the union).
   */
  inByIndex?: { field: string; resultOrder: SQL };
  /** The id column, needed when the request carries `hiddenIds`. */
  idColumn?: PgColumn;
  /** The resource's cache of page statements by shape, when it keeps one (ListStatements). */
  statements?: PageStatements;
}

/** Runs a page's SELECT through statements kept by query shape (ListStatements, list-statements.ts). */
export interface PageStatements {
  /** The page's items, each as `toResponse` answers it. */
  responses<TRow>(query: ListQuery<TRow>, params: ListParams): Promise<object[]>;
}

/** The tenant condition with the request's hidden ids taken out. */
function visibleScope<TRow>(query: ListQuery<TRow>): SQL {
  const hidden = query.request.hiddenIds ?? [];
  if (!hidden.length) return query.scope;
  if (!query.idColumn) throw new Error('A list that hides ids needs the id column');
  return and(query.scope, notInArray(query.idColumn, [...hidden])) ?? query.scope;
}

/** Beyond this many values, or a deeper page than this, the plain query is the better plan. */
const MAX_SPLIT_VALUES = 20;
const MAX_SPLIT_WINDOW = 10_000;

/** The distinct values of a `{field: {$in: [...]}}` worth splitting, or undefined. */
function valuesToSplit(field: string, where: unknown, params: ListParams): string[] | undefined {
  if (params.sort !== undefined || !isPlainObject(where)) return undefined;
  if (params.skip + params.limit > MAX_SPLIT_WINDOW) return undefined;
  const filter = where[field];
  if (!isPlainObject(filter) || Object.keys(filter).length !== 1 || !Array.isArray(filter.$in)) return undefined;
  // Distinct, or a repeated value would return its rows twice.
  const values = [...new Set<unknown>(filter.$in)];
  if (values.length < 2 || values.length > MAX_SPLIT_VALUES || !values.every((value) => typeof value === 'string')) return undefined;
  return values;
}

/** The SQL pieces of a page's SELECT: the condition and order, and the per-value conditions when split. */
export interface ListSelectParts {
  condition: SQL | undefined;
  order: SQL;
  /** With `inByIndex` and a `$in` worth splitting: one condition per value, and the union's order. */
  split?: {
    conditions: (SQL | undefined)[];
    resultOrder: SQL;
    /**
     * Each condition is the tenant scope and one value of the field, nothing else: each query is
     * a read of the `inByIndex` index in its order, and stops at the page's window, whatever the
     * values. Its plan does not depend on them (ListStatements may name the statement).
     */
    indexOnly: boolean;
  };
}

/** Translates a request into the pieces of its page's SELECT (validation and errors included). */
export function listSelectParts<TRow>(query: ListQuery<TRow>, params: ListParams): ListSelectParts {
  // Translated even when split below: the same validation and errors either way.
  const scope = visibleScope(query);
  const condition = and(scope, translateWhere(query.schema, query.request.where));
  const order = translateSort(query.schema, params.sort, query.defaultSort);
  const split = query.inByIndex && valuesToSplit(query.inByIndex.field, query.request.where, params);
  if (!query.inByIndex || !split) return { condition, order };
  const { field, resultOrder } = query.inByIndex;
  const where = query.request.where as Record<string, unknown>;
  const conditions = split.map((value) => and(scope, translateWhere(query.schema, { ...where, [field]: value })));
  const indexOnly = Object.keys(where).length === 1 && !query.request.hiddenIds?.length;
  return { condition, order, split: { conditions, resultOrder, indexOnly } };
}

/** Where a page starts and ends: numbers, or placeholders for a statement built once (ListStatements). */
export interface PageBounds {
  limit: number | Placeholder;
  offset: number | Placeholder;
  /** Rows each split query may take: offset + limit. */
  window: number | Placeholder;
}

/** The page's SELECT from its pieces: the plain query, or the per-value UNION ALL of `inByIndex`. */
export function buildListSelect(executor: Executor, table: PgTable, parts: ListSelectParts, bounds: PageBounds) {
  if (!parts.split) {
    return executor.select().from(table).where(parts.condition).orderBy(parts.order).limit(bounds.limit).offset(bounds.offset);
  }
  const [first, second, ...rest] = parts.split.conditions.map((condition) =>
    executor.select().from(table).where(condition).orderBy(parts.order).limit(bounds.window),
  );
  return unionAll(first, second, ...rest).orderBy(parts.split.resultOrder).limit(bounds.limit).offset(bounds.offset);
}

/**
 * The page's SELECT, as `runListQuery` runs it without a statement cache (exported so that query
 * plans can be explained from the very statement).
 */
export function listSelect<TRow>(query: ListQuery<TRow>, params: ListParams) {
  return buildListSelect(query.executor, query.table, listSelectParts(query, params), {
    limit: params.limit,
    offset: params.skip,
    window: params.skip + params.limit,
  });
}

/** The page's items built as Drizzle rows, then each through `toResponse`. */
export async function listResponses<TRow>(query: ListQuery<TRow>, params: ListParams): Promise<object[]> {
  const rows = (await listSelect(query, params)) as TRow[];
  return rows.map((row) => query.toResponse(row));
}

/**
 * The one implementation of list, `_query`, paging, sorting, counting and projection for every
 * resource. Repositories call it with their table and query schema.
 */
export async function runListQuery<TRow>(query: ListQuery<TRow>): Promise<ListPage<Record<string, unknown>>> {
  try {
    return await runBoundedListQuery(query);
  } catch (error) {
    // The database's statement timeout (DATABASE_STATEMENT_TIMEOUT_MS) ended the page or its count:
    // the request asked for more work than one request may cost (docs/bounded-work.md).
    if (isStatementCancelled(error)) throw tooMuchWork();
    throw error;
  }
}

function tooMuchWork(): DomainError {
  return new DomainError(
    'InvalidQuery',
    'The query needs more database work than one request may take; narrow it with the indexed fields (see the sortable fields), a smaller skip, or without with_count',
  );
}

/**
 * The most planner cost a list may reach on a database that cannot cancel a statement, reckoned
 * as if its unindexed conditions matched nothing. Measured on PGlite (docs/bounded-work.md): a
 * `document.*` condition costs about 60,000 units a second, so this is about 0.8 s of work.
 */
export const UNCANCELLABLE_QUERY_COST_MAX = 50_000;

async function runBoundedListQuery<TRow>(query: ListQuery<TRow>): Promise<ListPage<Record<string, unknown>>> {
  const params = parseListParams(query.request.query);
  const projection = parseSelect(query.schema, query.request.select);
  if (cannotCancelStatements(query.executor) && whereReadsUnindexed(query.schema, query.request.where)) {
    await assertAffordable(query, params);
  }
  const responses = query.statements ? await query.statements.responses(query, params) : await listResponses(query, params);
  const page: ListPage<Record<string, unknown>> = {
    items: responses.map((response) => applyProjection(response as Record<string, unknown>, projection)),
  };
  if (params.withCount) {
    const [{ count }] = await countSelect(query);
    page.count = count;
  }
  return page;
}

function countSelect<TRow>(query: ListQuery<TRow>) {
  const condition = and(visibleScope(query), translateWhere(query.schema, query.request.where));
  return query.executor.select({ count: sql<number>`count(*)::int` }).from(query.table).where(condition);
}

interface PlanNode {
  'Total Cost': number;
  Plans?: PlanNode[];
}

/**
 * Refuses, before it runs, a list whose statements could run past UNCANCELLABLE_QUERY_COST_MAX.
 * Each plan is judged by its costliest node: under a LIMIT the planner counts on finding the page
 * early, which a filter that matches nothing belies, and the node below it is the whole scan.
 */
async function assertAffordable<TRow>(query: ListQuery<TRow>, params: ListParams): Promise<void> {
  const statements = params.withCount ? [listSelect(query, params), countSelect(query)] : [listSelect(query, params)];
  for (const statement of statements) {
    const [row] = await queryRows<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(query.executor, sql`explain (format json) ${statement}`);
    if (row && costliestNode(row['QUERY PLAN'][0].Plan) > UNCANCELLABLE_QUERY_COST_MAX) throw tooMuchWork();
  }
}

function costliestNode(node: PlanNode): number {
  return Math.max(node['Total Cost'], ...(node.Plans ?? []).map(costliestNode));
}

export const MAX_BULK_IDS = 1000;

/** Validates the body of a bulk DELETE: `{"ids": [...]}` with 1..1000 strings. */
export function parseBulkIds(body: unknown): string[] {
  const ids = (body as { ids?: unknown } | null | undefined)?.ids;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_BULK_IDS || !ids.every(isPossibleId)) {
    throw new DomainError('ModelValidationError', `ids must be an array of 1 to ${MAX_BULK_IDS} id strings`, [
      { field: 'ids', message: `must be an array of 1 to ${MAX_BULK_IDS} id strings` },
    ]);
  }
  return [...new Set(ids)];
}

/**
 * Deletes the rows with these ids inside the scope and answers them (for events); ids of another
 * membership are simply not found.
 */
export async function deleteByIds<TRow>(executor: Executor, table: PgTable, idColumn: PgColumn, scope: SQL, ids: readonly string[]): Promise<TRow[]> {
  if (!ids.length) return [];
  return (await executor
    .delete(table)
    .where(and(scope, inArray(idColumn, [...ids])))
    .returning()) as TRow[];
}

/** The contract's bulk-delete answer. */
export function bulkDeleteAnswer(requested: readonly string[], deletedIds: readonly string[]): { deleted: string[]; not_found: string[] } {
  const deleted = new Set(deletedIds);
  return { deleted: requested.filter((id) => deleted.has(id)), not_found: requested.filter((id) => !deleted.has(id)) };
}
