import { Inject, Injectable } from '@nestjs/common';
import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { webhooks, type WebhookRow } from '../database/schema';
import { deleteByIds, runListQuery, type ListPage, type ListRequest, type QuerySchema } from '../common/query';
import { toWebhookResponse } from './webhook.mapper';

export type NewWebhookRow = typeof webhooks.$inferInsert;
/** The fields a replace (PUT) writes. */
export type WebhookChanges = Pick<NewWebhookRow, 'name' | 'slug' | 'description' | 'event' | 'status' | 'tryCount' | 'request' | 'secret' | 'modifiedAt' | 'modifiedBy'>;

/** Sortable: what an index serves inside one membership (slug unique index, created index). */
export const WEBHOOK_QUERY_SCHEMA: QuerySchema = {
  fields: {
    _id: { sql: sql`${webhooks.id}`, type: 'string' },
    name: { sql: sql`${webhooks.name}`, type: 'string' },
    slug: { sql: sql`${webhooks.slug}`, type: 'string', sortable: true },
    description: { sql: sql`${webhooks.description}`, type: 'string' },
    event: { sql: sql`${webhooks.event}`, type: 'string' },
    status: { sql: sql`${webhooks.status}`, type: 'string' },
    try_count: { sql: sql`${webhooks.tryCount}`, type: 'integer' },
    request: { sql: sql`${webhooks.request}`, type: 'json' },
    membership_id: { sql: sql`${webhooks.membershipId}`, type: 'string' },
    'sys.created_at': { sql: sql`${webhooks.createdAt}`, type: 'timestamp', sortable: true },
    'sys.created_by': { sql: sql`${webhooks.createdBy}`, type: 'string' },
    'sys.modified_at': { sql: sql`${webhooks.modifiedAt}`, type: 'timestamp' },
    'sys.modified_by': { sql: sql`${webhooks.modifiedBy}`, type: 'string' },
    has_secret: { sql: sql`(${webhooks.secret} is not null)`, type: 'boolean' },
  },
  hidden: ['secret'],
};

const DEFAULT_SORT: SQL = sql`${asc(webhooks.createdAt)}, ${asc(webhooks.id)}`;
const scope = (membershipId: string): SQL => eq(webhooks.membershipId, membershipId);

@Injectable()
export class WebhookRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async findById(membershipId: string, id: string, executor: Executor = this.database.db): Promise<WebhookRow | undefined> {
    const [row] = await executor
      .select()
      .from(webhooks)
      .where(and(scope(membershipId), eq(webhooks.id, id)))
      .limit(1);
    return row;
  }

  /** The row, locked until the transaction ends, so concurrent replaces of one webhook serialize. */
  async findByIdForUpdate(membershipId: string, id: string, tx: Executor = this.database.db): Promise<WebhookRow | undefined> {
    const [row] = await tx
      .select()
      .from(webhooks)
      .where(and(scope(membershipId), eq(webhooks.id, id)))
      .limit(1)
      .for('update');
    return row;
  }

  /**
   * The webhooks an event of this type calls (served by webhooks_membership_event). `async`: a
   * real promise, which callers may cache and await many times (a drizzle query runs again on every `then`).
   */
  async findActiveFor(membershipId: string, eventType: string): Promise<WebhookRow[]> {
    return this.database.db
      .select()
      .from(webhooks)
      .where(and(scope(membershipId), eq(webhooks.event, eventType), eq(webhooks.status, 'active')));
  }

  list(membershipId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery<WebhookRow>({
      executor: this.database.db,
      table: webhooks,
      idColumn: webhooks.id,
      scope: scope(membershipId),
      schema: WEBHOOK_QUERY_SCHEMA,
      request,
      defaultSort: DEFAULT_SORT,
      toResponse: toWebhookResponse,
    });
  }

  async insert(membershipId: string, row: Omit<NewWebhookRow, 'membershipId'>, tx: Executor = this.database.db): Promise<WebhookRow> {
    const [created] = await tx
      .insert(webhooks)
      .values({ ...row, membershipId })
      .returning();
    return created;
  }

  async replace(membershipId: string, id: string, changes: WebhookChanges, tx: Executor = this.database.db): Promise<WebhookRow> {
    const [updated] = await tx
      .update(webhooks)
      .set(changes)
      .where(and(scope(membershipId), eq(webhooks.id, id)))
      .returning();
    return updated;
  }

  async deleteById(membershipId: string, id: string, tx: Executor = this.database.db): Promise<WebhookRow | undefined> {
    const [deleted] = await tx
      .delete(webhooks)
      .where(and(scope(membershipId), eq(webhooks.id, id)))
      .returning();
    return deleted;
  }

  deleteByIds(membershipId: string, ids: readonly string[], tx: Executor = this.database.db): Promise<WebhookRow[]> {
    return deleteByIds<WebhookRow>(tx, webhooks, webhooks.id, scope(membershipId), ids);
  }
}
