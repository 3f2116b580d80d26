import { Inject, Injectable } from '@nestjs/common';
import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database, type Executor, type Tx } from '../database/database';
import { mailhooks, type MailhookRow } from '../database/schema';
import { deleteByIds, runListQuery, type ListPage, type ListRequest, type QuerySchema } from '../common/query';
import { toMailhookResponse } from './mailhook.mapper';

export type NewMailhookRow = typeof mailhooks.$inferInsert;
/** The fields a replace (PUT) writes. */
export type MailhookChanges = Omit<NewMailhookRow, 'id' | 'membershipId' | 'createdAt' | 'createdBy'>;

/** Sortable: what an index serves inside one membership (slug unique index, created index). */
export const MAILHOOK_QUERY_SCHEMA: QuerySchema = {
  fields: {
    _id: { sql: sql`${mailhooks.id}`, type: 'string' },
    name: { sql: sql`${mailhooks.name}`, type: 'string' },
    slug: { sql: sql`${mailhooks.slug}`, type: 'string', sortable: true },
    description: { sql: sql`${mailhooks.description}`, type: 'string' },
    event: { sql: sql`${mailhooks.event}`, type: 'string' },
    is_active: { sql: sql`${mailhooks.isActive}`, type: 'boolean' },
    mail_provider: { sql: sql`${mailhooks.mailProvider}`, type: 'string' },
    from_address: { sql: sql`${mailhooks.fromAddress}`, type: 'string' },
    from_name: { sql: sql`${mailhooks.fromName}`, type: 'string' },
    mail_subject: { sql: sql`${mailhooks.mailSubject}`, type: 'string' },
    mail_format: { sql: sql`${mailhooks.mailFormat}`, type: 'string' },
    mail_template: { sql: sql`${mailhooks.mailTemplate}`, type: 'string' },
    send_to_utilizer: { sql: sql`${mailhooks.sendToUtilizer}`, type: 'boolean' },
    recipients: { sql: sql`${mailhooks.recipients}`, type: 'json' },
    membership_id: { sql: sql`${mailhooks.membershipId}`, type: 'string' },
    'sys.created_at': { sql: sql`${mailhooks.createdAt}`, type: 'timestamp', sortable: true },
    'sys.created_by': { sql: sql`${mailhooks.createdBy}`, type: 'string' },
    'sys.modified_at': { sql: sql`${mailhooks.modifiedAt}`, type: 'timestamp' },
    'sys.modified_by': { sql: sql`${mailhooks.modifiedBy}`, type: 'string' },
  },
};

const DEFAULT_SORT: SQL = sql`${asc(mailhooks.createdAt)}, ${asc(mailhooks.id)}`;
const scope = (membershipId: string): SQL => eq(mailhooks.membershipId, membershipId);

@Injectable()
export class MailhookRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async findById(membershipId: string, id: string, executor: Executor = this.database.db): Promise<MailhookRow | undefined> {
    const [row] = await executor
      .select()
      .from(mailhooks)
      .where(and(scope(membershipId), eq(mailhooks.id, id)))
      .limit(1);
    return row;
  }

  /** The row, locked until the transaction ends, so concurrent replaces of one mail hook serialize. */
  async findByIdForUpdate(membershipId: string, id: string, tx: Tx): Promise<MailhookRow | undefined> {
    const [row] = await tx
      .select()
      .from(mailhooks)
      .where(and(scope(membershipId), eq(mailhooks.id, id)))
      .limit(1)
      .for('update');
    return row;
  }

  /**
   * The mail hooks an event of this type sends (served by mailhooks_membership_event). `async` on
   * purpose: a drizzle query is a lazy thenable that runs again on every `then`, and the mail
   * dispatcher caches what this returns and awaits it once per event; the cached builder ran one
   * query per event (every TokenVerified, every refresh), a real promise runs it once.
   */
  async findActiveFor(membershipId: string, eventType: string): Promise<MailhookRow[]> {
    return this.database.db
      .select()
      .from(mailhooks)
      .where(and(scope(membershipId), eq(mailhooks.event, eventType), eq(mailhooks.isActive, true)));
  }

  list(membershipId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery<MailhookRow>({
      executor: this.database.db,
      table: mailhooks,
      idColumn: mailhooks.id,
      scope: scope(membershipId),
      schema: MAILHOOK_QUERY_SCHEMA,
      request,
      defaultSort: DEFAULT_SORT,
      toResponse: toMailhookResponse,
    });
  }

  async insert(membershipId: string, tx: Tx, row: Omit<NewMailhookRow, 'membershipId'>): Promise<MailhookRow> {
    const [created] = await tx
      .insert(mailhooks)
      .values({ ...row, membershipId })
      .returning();
    return created;
  }

  async replace(membershipId: string, tx: Tx, id: string, changes: MailhookChanges): Promise<MailhookRow> {
    const [updated] = await tx
      .update(mailhooks)
      .set(changes)
      .where(and(scope(membershipId), eq(mailhooks.id, id)))
      .returning();
    return updated;
  }

  async deleteById(membershipId: string, tx: Tx, id: string): Promise<MailhookRow | undefined> {
    const [deleted] = await tx
      .delete(mailhooks)
      .where(and(scope(membershipId), eq(mailhooks.id, id)))
      .returning();
    return deleted;
  }

  deleteByIds(membershipId: string, tx: Tx, ids: readonly string[]): Promise<MailhookRow[]> {
    return deleteByIds<MailhookRow>(tx, mailhooks, mailhooks.id, scope(membershipId), ids);
  }
}
