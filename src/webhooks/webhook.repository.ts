import { Injectable } from '@nestjs/common';
import { eq } from 'drizzle-orm';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { webhooks, type WebhookRow } from '../database/schema';
import { isSetField, membershipSysFields, namedResourceFields, querySchema } from '../common/query';
import { toWebhookResponse } from './webhook.mapper';

export type NewWebhookRow = typeof webhooks.$inferInsert;
/** The fields a replace (PUT) writes. */
export type WebhookChanges = Pick<NewWebhookRow, 'name' | 'slug' | 'description' | 'event' | 'status' | 'tryCount' | 'request' | 'secret' | 'modifiedAt' | 'modifiedBy'>;

/** Sortable: what an index serves inside one membership (slug unique index, created index). */
export const WEBHOOK_QUERY_SCHEMA = querySchema(
  webhooks,
  [
    namedResourceFields(webhooks, { sortableId: false }),
    'event', 'status', 'tryCount', 'request',
    membershipSysFields(webhooks),
    { has_secret: isSetField(webhooks.secret) },
  ],
  { hidden: ['secret'] },
);

@Injectable()
export class WebhookRepository extends MembershipScopedRepository<WebhookRow, NewWebhookRow, WebhookChanges> {
  protected override readonly resource = { table: webhooks, schema: WEBHOOK_QUERY_SCHEMA, toResponse: toWebhookResponse };

  /**
   * The webhooks an event of this type calls (served by webhooks_membership_event). `async`: a
   * real promise, which callers may cache and await many times (a drizzle query runs again on every `then`).
   */
  async findActiveFor(membershipId: string, eventType: string): Promise<WebhookRow[]> {
    return this.findWhere(membershipId, [eq(webhooks.event, eventType), eq(webhooks.status, 'active')]);
  }
}
