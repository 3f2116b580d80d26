import type { Caller } from '../caller';
import { DomainError, type ErrorCode } from '../errors';
import { bulkDeleteAnswer, type ListPage, type ListRequest, parseSearchKeyword } from '../query';
import { sameJson } from '../same-json';

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
  /** The row, locked until the transaction ends. */
  findByIdForUpdate(membershipId: string, id: string): Promise<TRow | undefined>;
  /** One page, as the API answers it. */
  list(membershipId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>>;
  /** One page of the rows whose name, slug or description contain `keyword` (the search routes). */
  search(membershipId: string, request: ListRequest, keyword: string): Promise<ListPage<Record<string, unknown>>>;
  deleteByIds(membershipId: string, ids: readonly string[]): Promise<TRow[]>;
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
  transaction<T>(work: (record: (change: ResourceChange<TEventType>) => unknown) => Promise<T>): Promise<T>;
}

/** CallerPermissions (roles/), by shape: the per-object decisions of list and bulk routes. */
export interface ResourcePermissions {
  hiddenFromLists(caller: Caller, resource: string): Promise<string[]>;
  assertMayActOnEach(caller: Caller, resource: string, action: string, ids: readonly string[]): Promise<void>;
}

/**
 * The names a resource's service may go by: those whose `<Name>Created`, `<Name>Updated` and
 * `<Name>Deleted` are event types and whose `<Name>NotFound` is an error code (one convention for
 * every resource, checked by the compiler).
 */
export type ResourceEntity<TEventType extends string, TAll extends string = TEventType> = TEventType extends `${infer Name}Deleted`
  ? [`${Name}Created` | `${Name}Updated`] extends [TAll]
    ? `${Name}NotFound` extends ErrorCode
      ? Name
      : never
    : never
  : never;

export interface MembershipResourceDefinition<TRow, TResponse, TEventType extends string> {
  /** The resource of its permissions (`webhooks` in `webhooks.delete.<id>`). */
  resource: string;
  /** The name in its events and 404 code: `Webhook` records WebhookCreated/Updated/Deleted and answers WebhookNotFound. */
  entity: ResourceEntity<TEventType>;
  /** The name in its 404 message ("The mail hook does not exist"). */
  noun: string;
  /** The row as the API answers it. */
  toResponse: (row: TRow) => TResponse;
  /** The row as its events show it; left out, as the API answers it. */
  toEventDocument?: (row: TRow) => object;
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
    /** The subclass's create and replace record their events through it too, in one transaction with the change. */
    protected readonly changes: ResourceChangeRecorder<TEventType>,
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
    // ResourceEntity admits only names whose `<Name>NotFound` is an error code.
    return new DomainError(`${this.entity}NotFound` as ErrorCode, `The ${this.definition.noun} does not exist`);
  }

  /** The row a replace starts from, locked until its transaction ends; 404 when it is gone. */
  protected async lockCurrent(membershipId: string, id: string): Promise<TRow> {
    const current = await this.rows.findByIdForUpdate(membershipId, id);
    if (!current) throw this.notFound();
    return current;
  }

  /** A replace that would store what `current` holds already answers 409 (compared as JSON, key by key of `next`). */
  protected assertChanges(current: TRow, next: Partial<TRow>): void {
    const keys = Object.keys(next) as (keyof TRow)[];
    if (keys.every((key) => sameJson(current[key], next[key]))) {
      throw new DomainError('IdenticalDocumentError', 'The update changes nothing');
    }
  }

  /** The `<Entity>Created` event of a new row. */
  protected createdEvent(membershipId: string, utilizerId: string, row: TRow): ResourceChange<TEventType> {
    return { membershipId, eventType: this.eventType('Created'), utilizerId, document: this.eventDocument(row) };
  }

  /** The `<Entity>Updated` event of a changed row, with the row before as `prior`. */
  protected updatedEvent(membershipId: string, utilizerId: string, row: TRow, before: TRow): ResourceChange<TEventType> {
    return { membershipId, eventType: this.eventType('Updated'), utilizerId, document: this.eventDocument(row), prior: this.eventDocument(before) };
  }

  /** List, `_query` and search: without the objects a forbidden entry denies the caller reading. */
  async list(caller: Caller, membershipId: string, request: ListRequest, keyword?: string): Promise<ListPage<Record<string, unknown>>> {
    const hiddenIds = await this.access.hiddenFromLists(caller, this.definition.resource);
    const visible = { ...request, hiddenIds };
    return keyword === undefined ? this.rows.list(membershipId, visible) : this.rows.search(membershipId, visible, keyword);
  }

  /** `GET /search?keyword=` (the resources that route it); `query` holds the other list parameters. */
  search(caller: Caller, membershipId: string, keyword: unknown, query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.list(caller, membershipId, { query }, parseSearchKeyword(keyword));
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
   * What must hold before any of these ids is deleted (a row in use, a managed row, what the
   * deletion grants `caller`'s grantees): throwing here deletes none of them. Runs in the delete's transaction.
   */
  protected async beforeDelete(_membershipId: string, _ids: readonly string[], _caller: Caller): Promise<void> {}

  /**
   * What follows the deletes (a cache to forget), after their transaction: committed when the
   * recorder opened it, still open when it is the request's (defer to its afterCommit there).
   */
  protected afterDelete(_membershipId: string, _deleted: readonly TRow[]): void {}

  private async deleteRows(caller: Caller, membershipId: string, ids: readonly string[]): Promise<TRow[]> {
    const deletedEvent = this.eventType('Deleted');
    const deleted = await this.changes.transaction(async (record) => {
      await this.beforeDelete(membershipId, ids, caller);
      const rows = await this.rows.deleteByIds(membershipId, ids);
      for (const row of rows) {
        record({ membershipId, eventType: deletedEvent, utilizerId: caller.id, document: {}, prior: this.eventDocument(row) });
      }
      return rows;
    });
    this.afterDelete(membershipId, deleted);
    return deleted;
  }

  private eventType(change: 'Created' | 'Updated' | 'Deleted'): TEventType {
    // ResourceEntity admits only names whose three events are all of TEventType.
    return `${this.entity}${change}` as TEventType;
  }

  /** The entity name as a plain string (the compiler cannot resolve ResourceEntity inside this generic class). */
  private get entity(): string {
    return this.definition.entity;
  }

  private eventDocument(row: TRow): object {
    return (this.definition.toEventDocument ?? this.definition.toResponse)(row);
  }
}
