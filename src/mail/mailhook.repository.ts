import { Injectable } from '@nestjs/common';
import { eq } from 'drizzle-orm';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { mailhooks, type MailhookRow } from '../database/schema';
import { membershipSysFields, namedResourceFields, querySchema } from '../common/query';
import { toMailhookResponse } from './mailhook.mapper';

export type NewMailhookRow = typeof mailhooks.$inferInsert;
/** The fields a replace (PUT) writes. */
export type MailhookChanges = Omit<NewMailhookRow, 'id' | 'membershipId' | 'createdAt' | 'createdBy'>;

/** Sortable: what an index serves inside one membership (slug unique index, created index). */
export const MAILHOOK_QUERY_SCHEMA = querySchema(mailhooks, [
  namedResourceFields(mailhooks, { sortableId: false }),
  'event', 'isActive', 'mailProvider', 'fromAddress', 'fromName', 'mailSubject', 'mailFormat', 'mailTemplate', 'sendToUtilizer', 'recipients',
  membershipSysFields(mailhooks),
]);

@Injectable()
export class MailhookRepository extends MembershipScopedRepository<MailhookRow, NewMailhookRow, MailhookChanges> {
  protected override readonly resource = { table: mailhooks, schema: MAILHOOK_QUERY_SCHEMA, toResponse: toMailhookResponse };

  /**
   * The mail hooks an event of this type sends (served by mailhooks_membership_event). `async` on
   * purpose: a drizzle query is a lazy thenable that runs again on every `then`, and the mail
   * dispatcher caches what this returns and awaits it once per event; the cached builder ran one
   * query per event (every TokenVerified, every refresh), a real promise runs it once.
   */
  async findActiveFor(membershipId: string, eventType: string): Promise<MailhookRow[]> {
    return this.findWhere(membershipId, [eq(mailhooks.event, eventType), eq(mailhooks.isActive, true)]);
  }
}
