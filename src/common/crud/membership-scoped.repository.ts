import { and, asc, eq, ilike, or, sql, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { Inject } from '@nestjs/common';
import { DATABASE, type Database } from '../../database/database';
import { deleteByIds, likePattern, runListQuery, type ListPage, type ListRequest, type QuerySchema } from '../query';

/**
 * A table of rows that belong to one membership, with the columns every such resource has
 * (database/schema.ts `namedResource` and `sysColumns`).
 */
export type MembershipScopedTable = PgTable & {
  id: PgColumn;
  membershipId: PgColumn;
  name: PgColumn;
  slug: PgColumn;
  description: PgColumn;
  createdAt: PgColumn;
};

export interface MembershipScopedResource<TRow> {
  table: MembershipScopedTable;
  /** The fields `where`, `select` and `sort` may name (see common/query). */
  schema: QuerySchema;
  /** The row as the API answers it. */
  toResponse: (row: TRow) => object;
}

/**
 * The reads and writes every membership resource with a plain CRUD surface repeats (roles,
 * applications, user types, mail hooks, webhooks, providers, token code policies): find by id
 * (locked or not) or slug, list/_query, keyword search, insert, replace, delete one, delete many,
 * always inside the membership, so an id of another membership is simply not found. A repository
 * extends it, declares its `resource` and adds only what is its own; it needs no constructor (Nest
 * injects the database through this one). Convention: the membership first. Every query runs on
 * DATABASE's `db`: the request's transaction while one is open (RequestTransaction), else the database.
 *
 * Drizzle cannot infer row types through a table type parameter, so the queries here answer
 * through casts to TRow: the table and TRow are paired once, in the subclass's `resource`.
 */
export abstract class MembershipScopedRepository<TRow, TNewRow extends object, TChanges extends object> {
  /** The table, its query schema and its response form. */
  protected abstract readonly resource: MembershipScopedResource<TRow>;

  constructor(@Inject(DATABASE) protected readonly database: Database) {}

  /** The tenant condition of every query. */
  protected scope(membershipId: string): SQL {
    return eq(this.resource.table.membershipId, membershipId);
  }

  protected byId(membershipId: string, id: string): SQL | undefined {
    return and(this.scope(membershipId), eq(this.resource.table.id, id));
  }

  async findById(membershipId: string, id: string): Promise<TRow | undefined> {
    const [row] = await this.database.db.select().from(this.resource.table).where(this.byId(membershipId, id)).limit(1);
    return row as TRow | undefined;
  }

  /** The rows of the membership that all `conditions` pick. */
  protected async findWhere(membershipId: string, conditions: readonly SQL[]): Promise<TRow[]> {
    return (await this.database.db
      .select()
      .from(this.resource.table)
      .where(and(this.scope(membershipId), ...conditions))) as TRow[];
  }

  async findBySlug(membershipId: string, slug: string): Promise<TRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(this.resource.table)
      .where(and(this.scope(membershipId), eq(this.resource.table.slug, slug)))
      .limit(1);
    return row as TRow | undefined;
  }

  /** The row, locked until the transaction ends, so concurrent replaces of one row serialize. */
  async findByIdForUpdate(membershipId: string, id: string): Promise<TRow | undefined> {
    const [row] = await this.database.db.select().from(this.resource.table).where(this.byId(membershipId, id)).limit(1).for('update');
    return row as TRow | undefined;
  }

  list(membershipId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    return this.listWhere(this.scope(membershipId), request);
  }

  /** List and `_query` narrowed to the rows whose name, slug or description contain `keyword` (the search routes). */
  search(membershipId: string, request: ListRequest, keyword: string): Promise<ListPage<Record<string, unknown>>> {
    const { name, slug, description } = this.resource.table;
    const pattern = likePattern(keyword);
    const matches = or(ilike(name, pattern), ilike(slug, pattern), ilike(description, pattern));
    return this.listWhere(and(this.scope(membershipId), matches) ?? this.scope(membershipId), request);
  }

  async insert(membershipId: string, row: Omit<TNewRow, 'membershipId'>): Promise<TRow> {
    const [created] = (await this.database.db
      .insert(this.resource.table)
      .values({ ...row, membershipId })
      .returning()) as TRow[];
    return created;
  }

  async replace(membershipId: string, id: string, changes: TChanges): Promise<TRow> {
    const [updated] = (await this.database.db.update(this.resource.table).set(changes).where(this.byId(membershipId, id)).returning()) as TRow[];
    return updated;
  }

  async deleteById(membershipId: string, id: string): Promise<TRow | undefined> {
    const [deleted] = (await this.database.db.delete(this.resource.table).where(this.byId(membershipId, id)).returning()) as TRow[];
    return deleted;
  }

  deleteByIds(membershipId: string, ids: readonly string[]): Promise<TRow[]> {
    return deleteByIds<TRow>(this.database.db, this.resource.table, this.resource.table.id, this.scope(membershipId), ids);
  }

  private listWhere(scope: SQL, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery<TRow>({
      executor: this.database.db,
      table: this.resource.table,
      idColumn: this.resource.table.id,
      scope,
      schema: this.resource.schema,
      request,
      // Creation order, the id as tie-breaker: what an index serves inside one membership.
      defaultSort: sql`${asc(this.resource.table.createdAt)}, ${asc(this.resource.table.id)}`,
      toResponse: this.resource.toResponse,
    });
  }
}
