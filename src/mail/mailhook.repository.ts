import { Inject, Injectable } from '@nestjs/common';
import { and, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { mailhooks, type MailhookRow } from '../database/schema';
import { membershipSysFields, namedResourceFields, type QuerySchema } from '../common/query';
import { toMailhookResponse } from './mailhook.mapper';

export type NewMailhookRow = typeof mailhooks.$inferInsert;
/** The fields a replace (PUT) writes. */
export type MailhookChanges = Omit<NewMailhookRow, 'id' | 'membershipId' | 'createdAt' | 'createdBy'>;

/** Sortable: what an index serves inside one membership (slug unique index, created index). */
export const MAILHOOK_QUERY_SCHEMA: QuerySchema = {
  fields: {
    ...namedResourceFields(mailhooks, { sortableId: false }),
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
    ...membershipSysFields(mailhooks),
  },
};

@Injectable()
export class MailhookRepository extends MembershipScopedRepository<MailhookRow, NewMailhookRow, MailhookChanges> {
  constructor(@Inject(DATABASE) database: Database) {
    super(database, { table: mailhooks, schema: MAILHOOK_QUERY_SCHEMA, toResponse: toMailhookResponse });
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
      .where(and(this.scope(membershipId), eq(mailhooks.event, eventType), eq(mailhooks.isActive, true)));
  }
}
