import { and, inArray, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from '../../database/database';
import { DomainError } from '../errors';
import type { QuerySchema } from './query-schema';
import { applyProjection, parseListParams, parseSelect, translateSort, translateWhere } from './translate';

/** What a list or `_query` request carries: the query string, and for `_query` a body. */
export interface ListRequest {
  query: Record<string, unknown>;
  where?: unknown;
  select?: unknown;
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
}

/**
 * The one implementation of list, `_query`, paging, sorting, counting and projection for every
 * resource. Repositories call it with their table and query schema.
 */
export async function runListQuery<TRow>(query: ListQuery<TRow>): Promise<ListPage<Record<string, unknown>>> {
  const params = parseListParams(query.request.query);
  const projection = parseSelect(query.schema, query.request.select);
  const condition = and(query.scope, translateWhere(query.schema, query.request.where));
  const rows = (await query.executor
    .select()
    .from(query.table)
    .where(condition)
    .orderBy(translateSort(query.schema, params.sort, query.defaultSort))
    .limit(params.limit)
    .offset(params.skip)) as TRow[];
  const page: ListPage<Record<string, unknown>> = {
    items: rows.map((row) => applyProjection(query.toResponse(row) as Record<string, unknown>, projection)),
  };
  if (params.withCount) {
    const [{ count }] = await query.executor.select({ count: sql<number>`count(*)::int` }).from(query.table).where(condition);
    page.count = count;
  }
  return page;
}

export const MAX_BULK_IDS = 1000;

/** Validates the body of a bulk DELETE: `{"ids": [...]}` with 1..1000 strings. */
export function parseBulkIds(body: unknown): string[] {
  const ids = (body as { ids?: unknown } | null | undefined)?.ids;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_BULK_IDS || !ids.every((id) => typeof id === 'string' && id.length > 0 && id.length <= 128)) {
    throw new DomainError('ModelValidationError', `ids must be an array of 1 to ${MAX_BULK_IDS} id strings`, [
      { field: 'ids', message: `must be an array of 1 to ${MAX_BULK_IDS} id strings` },
    ]);
  }
  return [...new Set(ids as string[])];
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
