import type { Executor, Tx } from '../../database/database';
import type { Caller } from '../caller';
import type { DomainError } from '../errors';
import { bulkDeleteAnswer, type ListPage, type ListRequest } from '../query';

/** The answer of a bulk delete (contract "Lists, queries, updates, bulk delete"). */
export interface BulkDeleteAnswer {
  deleted: string[];
  not_found: string[];
}

/**
 * What MembershipResourceController asks of a resource's service: one signature order for every
 * resource (caller, membership, id, body), so that the routes are written once.
 */
export interface MembershipResourceOperations<TBody, TResponse, TCreated = TResponse> {
  list(caller: Caller, membershipId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>>;
  get(membershipId: string, id: string): Promise<TResponse>;
  create(caller: Caller, membershipId: string, body: TBody): Promise<TCreated>;
  replace(caller: Caller, membershipId: string, id: string, body: TBody): Promise<TResponse>;
  delete(caller: Caller, membershipId: string, id: string): Promise<void>;
  deleteMany(caller: Caller, membershipId: string, ids: string[]): Promise<BulkDeleteAnswer>;
}

/** The operations of a resource that also has `GET /search?keyword=` (roles, applications). */
export interface SearchableResourceOperations<TBody, TResponse, TCreated = TResponse> extends MembershipResourceOperations<TBody, TResponse, TCreated> {
  /** A page of those whose name, slug or description contain the keyword; `query` holds the other list parameters. */
  search(caller: Caller, membershipId: string, keyword: unknown, query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>>;
}

/** The reads and deletes the shared operations need of a repository (MembershipScopedRepository has them). */
export interface MembershipResourceRows<TRow> {
  findById(membershipId: string, id: string): Promise<TRow | undefined>;
  /** One page, as the API answers it. */
  list(membershipId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>>;
  /** One page of the rows whose name, slug or description contain `keyword` (the search routes). */
  search(membershipId: string, request: ListRequest, keyword: string): Promise<ListPage<Record<string, unknown>>>;
  deleteByIds(membershipId: string, ids: readonly string[], executor?: Executor): Promise<TRow[]>;
}

/** One configuration event, as EventRecorder takes it (events/ sits above common/, so it is named here by shape). */
export interface ResourceChange<TEventType extends string> {
  membershipId: string;
  eventType: TEventType;
  utilizerId: string;
  document: object;
  prior?: object | null;
}

/** EventRecorder, by shape: its `transaction` joins the request transaction when one is open. */
export interface ResourceChangeRecorder<TEventType extends string> {
  transaction<T>(work: (tx: Tx, record: (change: ResourceChange<TEventType>) => unknown) => Promise<T>): Promise<T>;
}

/** CallerPermissions (roles/), by shape: the per-object decisions of list and bulk routes. */
export interface ResourcePermissions {
  hiddenFromLists(caller: Caller, resource: string): Promise<string[]>;
  assertMayActOnEach(caller: Caller, resource: string, action: string, ids: readonly string[]): Promise<void>;
}

export interface MembershipResourceDefinition<TRow, TResponse, TEventType extends string> {
  /** The resource of its permissions (`webhooks` in `webhooks.delete.<id>`). */
  resource: string;
  /** The row as the API answers it. */
  toResponse: (row: TRow) => TResponse;
  /** The row as the `prior` of its Deleted event shows it; left out, as the API answers it. */
  toEventDocument?: (row: TRow) => object;
  /** The event recorded for each deleted row. */
  deletedEvent: TEventType;
  /** The 404 of an id the membership does not have. */
  notFound: () => DomainError;
}

/**
 * The part of a membership resource's service that is the same for every resource: get, list and
 * `_query` (without the objects a forbidden entry hides from the caller), delete and bulk delete
 * (each id's permission, one Deleted event per row, in one transaction with the delete). A
 * subclass writes only its create and replace rules, and what a delete must check first or do
 * after (beforeDelete, afterDelete).
 */
export abstract class MembershipResourceService<TRow extends { id: string }, TBody, TResponse extends object, TEventType extends string, TCreated = TResponse>
  implements MembershipResourceOperations<TBody, TResponse, TCreated>
{
  protected constructor(
    private readonly definition: MembershipResourceDefinition<TRow, TResponse, TEventType>,
    private readonly rows: MembershipResourceRows<TRow>,
    private readonly changes: ResourceChangeRecorder<TEventType>,
    private readonly access: ResourcePermissions,
  ) {}

  abstract create(caller: Caller, membershipId: string, body: TBody): Promise<TCreated>;

  /** Replaces the mutable fields; a body that changes nothing answers 409 IdenticalDocumentError. */
  abstract replace(caller: Caller, membershipId: string, id: string, body: TBody): Promise<TResponse>;

  async get(membershipId: string, id: string): Promise<TResponse> {
    const row = await this.rows.findById(membershipId, id);
    if (!row) throw this.notFound();
    return this.definition.toResponse(row);
  }

  /** The 404 of an id the membership does not have. */
  protected notFound(): DomainError {
    return this.definition.notFound();
  }

  /** List, `_query` and search: without the objects a forbidden entry denies the caller reading. */
  async list(caller: Caller, membershipId: string, request: ListRequest, keyword?: string): Promise<ListPage<Record<string, unknown>>> {
    const hiddenIds = await this.access.hiddenFromLists(caller, this.definition.resource);
    const visible = { ...request, hiddenIds };
    return keyword === undefined ? this.rows.list(membershipId, visible) : this.rows.search(membershipId, visible, keyword);
  }

  async delete(caller: Caller, membershipId: string, id: string): Promise<void> {
    const [deleted] = await this.deleteRows(caller, membershipId, [id]);
    if (!deleted) throw this.notFound();
  }

  /** The permission is checked for every id (contract "Bulk routes apply each id's decision"). */
  async deleteMany(caller: Caller, membershipId: string, ids: string[]): Promise<BulkDeleteAnswer> {
    await this.access.assertMayActOnEach(caller, this.definition.resource, 'delete', ids);
    const deleted = await this.deleteRows(caller, membershipId, ids);
    return bulkDeleteAnswer(
      ids,
      deleted.map((row) => row.id),
    );
  }

  /**
   * What must hold before any of these ids is deleted (a row in use, a managed row): throwing
   * here deletes none of them. Runs in the delete's transaction.
   */
  protected async beforeDelete(_membershipId: string, _ids: readonly string[], _tx: Tx): Promise<void> {}

  /**
   * What follows the deletes (a cache to forget), after their transaction: committed when the
   * recorder opened it, still open when it is the request's (defer to its afterCommit there).
   */
  protected afterDelete(_membershipId: string, _deleted: readonly TRow[]): void {}

  private async deleteRows(caller: Caller, membershipId: string, ids: readonly string[]): Promise<TRow[]> {
    const { deletedEvent, toEventDocument = this.definition.toResponse } = this.definition;
    const deleted = await this.changes.transaction(async (tx, record) => {
      await this.beforeDelete(membershipId, ids, tx);
      const rows = await this.rows.deleteByIds(membershipId, ids, tx);
      for (const row of rows) {
        record({ membershipId, eventType: deletedEvent, utilizerId: caller.id, document: {}, prior: toEventDocument(row) });
      }
      return rows;
    });
    this.afterDelete(membershipId, deleted);
    return deleted;
  }
}
