import { Inject, Injectable } from '@nestjs/common';
import { and, desc, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database, type Executor, queryRows } from '../database/database';
import { deliveries, type DeliveryRow, type DeliveryStatus, type WebhookRequestTemplate } from '../database/schema';
import { querySchema, runListQuery, type ListPage, type ListRequest } from '../common/query';
import { toDeliveryResponse } from './delivery.mapper';

/** `where` on status and event_id (contract); sort by creation, which deliveries_webhook_created serves. */
export const DELIVERY_QUERY_SCHEMA = querySchema(
  deliveries,
  ['id', 'webhookId', 'eventId', 'status', 'attempts', 'nextAttemptAt', 'lastStatus', 'lastError', 'createdAt', 'updatedAt'],
  { sortable: ['createdAt'], hidden: ['lease_id'] },
);

/** The NOTIFY channel of deliveries written by an instance that does not dispatch them. */
const DELIVERIES_DUE_CHANNEL = 'portcullis_deliveries_due';

/** A claimed delivery with what its attempt needs: the stored event and the webhook as it is now (null when deleted). */
export interface ClaimedDelivery {
  id: string;
  membershipId: string;
  webhookId: string;
  eventId: string;
  /** Attempts finished before this claim. */
  attempts: number;
  event: {
    eventType: string;
    utilizerId: string;
    document: Record<string, unknown>;
    prior: Record<string, unknown> | null;
    eventTime: Date;
  } | null;
  webhook: ClaimedWebhook | null;
  /** When this instance claimed it (ms since the epoch): what it carries of the webhook is as of then. */
  claimedAt: number;
}

/** The webhook as a claim (or a later look) finds it. */
export interface ClaimedWebhook {
  status: string;
  tryCount: number;
  request: WebhookRequestTemplate;
  secret: string | null;
}

interface ClaimedRow {
  id: string;
  membership_id: string;
  webhook_id: string;
  event_id: string;
  attempts: number;
  event_type: string | null;
  utilizer_id: string;
  document: Record<string, unknown>;
  prior: Record<string, unknown> | null;
  event_time: Date | string;
  webhook_status: string | null;
  try_count: number;
  request: WebhookRequestTemplate;
  secret: string | null;
}

/** How an attempt left its delivery: `pending` with the time of the retry, or finished. */
export interface AttemptOutcome {
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date;
  lastStatus: number | null;
  lastError: string | null;
}

/** One attempt's outcome for `finishAttempts`, with the lease it was made under. */
export interface FinishedAttempt {
  id: string;
  membershipId: string;
  leaseId: string;
  outcome: AttemptOutcome;
}

const toClaimed = (row: ClaimedRow): ClaimedDelivery => ({
  id: row.id,
  membershipId: row.membership_id,
  webhookId: row.webhook_id,
  eventId: row.event_id,
  attempts: row.attempts,
  event:
    row.event_type === null
      ? null
      : { eventType: row.event_type, utilizerId: row.utilizer_id, document: row.document, prior: row.prior, eventTime: new Date(row.event_time) },
  webhook: row.webhook_status === null ? null : { status: row.webhook_status, tryCount: row.try_count, request: row.request, secret: row.secret },
  claimedAt: Date.now(),
});

/**
 * The deliveries table (contract "Durable webhook delivery"). Rows are written by the statements
 * that record events (events/event.repository.ts `deliveriesOf`); here they are claimed, finished,
 * listed and redelivered. `claimDue`, `release` and `pendingStats` serve the dispatcher, which works
 * for every membership at once: they take no membership, and a claimed row carries its own.
 */
@Injectable()
export class DeliveryRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  /**
   * Runs `onDue` when an instance that does not dispatch (WEBHOOK_DISPATCH=off) wrote deliveries
   * (`announceDue`), on a PostgreSQL server, and after the listening connection was lost and
   * opened again (announcements meanwhile are gone); answers the stop. Undefined on the embedded
   * database, where this process is the only one.
   */
  async listenForDue(onDue: () => void): Promise<(() => Promise<void>) | undefined> {
    return this.database.listen?.(DELIVERIES_DUE_CHANNEL, onDue, onDue);
  }

  /** Wakes the dispatching instances (see `listenForDue`); a notification is sent when this statement commits. */
  async announceDue(): Promise<void> {
    await this.database.db.execute(sql`select pg_notify(${DELIVERIES_DUE_CHANNEL}, '')`);
  }

  /**
   * Claims up to `limit` due deliveries for `leaseSeconds`: rows other instances hold are skipped,
   * not waited for, and a claimed row is not due again before its lease ends.
   */
  async claimDue(limit: number, leaseId: string, leaseSeconds: number): Promise<ClaimedDelivery[]> {
    const rows = await queryRows<ClaimedRow>(
      this.database.db,
      sql`with due as (
            select id from ${deliveries}
            where status = 'pending' and next_attempt_at <= now()
            order by next_attempt_at
            limit ${limit}
            for update skip locked
          ), claimed as (
            update ${deliveries} d set lease_id = ${leaseId}, next_attempt_at = now() + make_interval(secs => ${leaseSeconds}), updated_at = now()
            from due where d.id = due.id
            returning d.id, d.membership_id, d.webhook_id, d.event_id, d.attempts
          )
          select c.id, c.membership_id, c.webhook_id, c.event_id, c.attempts,
            e.event_type, e.utilizer_id, e.document, e.prior, e.event_time,
            w.status as webhook_status, w.try_count, w.request, w.secret
          from claimed c
          left join events e on e.id = c.event_id and e.membership_id = c.membership_id
          left join webhooks w on w.id = c.webhook_id and w.membership_id = c.membership_id`,
    );
    return rows.map(toClaimed);
  }

  /**
   * Records the outcomes of attempts (of any memberships: each names its own) in one statement,
   * each only while its lease still holds the row: a row claimed again or redelivered meanwhile is
   * left alone. Answers how many rows were still held.
   */
  async finishAttempts(finished: readonly FinishedAttempt[]): Promise<number> {
    if (!finished.length) return 0;
    const json = JSON.stringify(
      finished.map((f) => ({
        id: f.id,
        membership_id: f.membershipId,
        lease_id: f.leaseId,
        status: f.outcome.status,
        attempts: f.outcome.attempts,
        next_attempt_at: f.outcome.nextAttemptAt.toISOString(),
        last_status: f.outcome.lastStatus,
        last_error: f.outcome.lastError,
      })),
    );
    const rows = await queryRows<{ id: string }>(
      this.database.db,
      sql`update ${deliveries} d set status = f.status, attempts = f.attempts, next_attempt_at = f.next_attempt_at,
            last_status = f.last_status, last_error = f.last_error, lease_id = null, updated_at = now()
          from jsonb_to_recordset(${json}::jsonb)
            as f(id text, membership_id text, lease_id text, status text, attempts int, next_attempt_at timestamptz, last_status int, last_error text)
          where d.id = f.id and d.membership_id = f.membership_id and d.lease_id = f.lease_id
          returning d.id`,
    );
    return rows.length;
  }

  /**
   * The webhook as it is now, for a delivery this lease still holds (pending): undefined when the
   * lease no longer holds it (canceled by a passive or deleted webhook, redelivered, claimed
   * again), `null` when the webhook is gone.
   */
  async heldWebhook(membershipId: string, id: string, leaseId: string): Promise<ClaimedWebhook | null | undefined> {
    const [row] = await queryRows<{ webhook_status: string | null; try_count: number; request: WebhookRequestTemplate; secret: string | null }>(
      this.database.db,
      sql`select w.status as webhook_status, w.try_count, w.request, w.secret
          from ${deliveries} d
          left join webhooks w on w.id = d.webhook_id and w.membership_id = d.membership_id
          where d.id = ${id} and d.membership_id = ${membershipId} and d.lease_id = ${leaseId} and d.status = 'pending'`,
    );
    if (!row) return undefined;
    return row.webhook_status === null ? null : { status: row.webhook_status, tryCount: row.try_count, request: row.request, secret: row.secret };
  }

  /** Claimed rows this instance will not attempt (it is stopping): due again at once, for any instance. */
  async release(leaseId: string, ids: readonly string[]): Promise<void> {
    if (!ids.length) return;
    await queryRows(
      this.database.db,
      sql`update ${deliveries} set lease_id = null, next_attempt_at = now(), updated_at = now()
          where lease_id = ${leaseId} and id in (select jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))`,
    );
  }

  /** A passive or deleted webhook's pending deliveries end, canceled (in the change's transaction). */
  async cancelPending(membershipId: string, webhookIds: readonly string[], executor: Executor = this.database.db): Promise<void> {
    if (!webhookIds.length) return;
    await queryRows(
      executor,
      sql`update ${deliveries} set status = 'canceled', lease_id = null, updated_at = now()
          where membership_id = ${membershipId} and status = 'pending'
            and webhook_id in (select jsonb_array_elements_text(${JSON.stringify(webhookIds)}::jsonb))`,
    );
  }

  async findById(membershipId: string, webhookId: string, id: string): Promise<DeliveryRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(deliveries)
      .where(and(eq(deliveries.membershipId, membershipId), eq(deliveries.webhookId, webhookId), eq(deliveries.id, id)))
      .limit(1);
    return row;
  }

  /** Pending again, due at once, attempts from zero; a lease held on it no longer counts. */
  async redeliver(membershipId: string, webhookId: string, id: string): Promise<DeliveryRow | undefined> {
    const [row] = await this.database.db
      .update(deliveries)
      .set({ status: 'pending', attempts: 0, nextAttemptAt: sql`now()`, leaseId: null, updatedAt: new Date() })
      .where(and(eq(deliveries.membershipId, membershipId), eq(deliveries.webhookId, webhookId), eq(deliveries.id, id)))
      .returning();
    return row;
  }

  /** A webhook's deliveries, newest first by default. */
  list(membershipId: string, webhookId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery<DeliveryRow>({
      executor: this.database.db,
      table: deliveries,
      idColumn: deliveries.id,
      scope: and(eq(deliveries.membershipId, membershipId), eq(deliveries.webhookId, webhookId)) ?? eq(deliveries.membershipId, membershipId),
      schema: DELIVERY_QUERY_SCHEMA,
      request,
      defaultSort: sql`${desc(deliveries.createdAt)}, ${desc(deliveries.id)}`,
      toResponse: toDeliveryResponse,
    });
  }

  /** For the metrics: pending deliveries of every membership, and the age of the oldest in seconds (0 when none). */
  async pendingStats(): Promise<{ pending: number; oldestAgeSeconds: number }> {
    const [row] = await queryRows<{ pending: number | string; oldest: number | string | null }>(
      this.database.db,
      sql`select count(*)::int as pending, extract(epoch from now() - min(created_at))::float8 as oldest
          from ${deliveries} where status = 'pending'`,
    );
    return { pending: Number(row?.pending ?? 0), oldestAgeSeconds: Math.max(0, Number(row?.oldest ?? 0)) };
  }
}
