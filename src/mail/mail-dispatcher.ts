import { type BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { LOGGER } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { MailhookRow, MailRecipient } from '../database/schema';
import { EventRecorder, type RecordedEvent } from '../events/event-recorder';
import { isResultEventType, SYSTEM_UTILIZER } from '../events/event-types';
import { BoundedQueue, type DrainResult } from '../queue/bounded-queue';
import { EventTrigger } from '../queue/event-triggered-delivery';
import { QueueRegistry } from '../queue/queue-registry';
import { MailDelivery, type MailItem } from './mail-delivery';
import { type MailOnlyValues, recipientsOf, subjectUserOf } from './mail-render';
import { MailhookRepository } from './mailhook.repository';
import type { SmtpResult } from './smtp-sender';

/** Contract: queue `mail`, 10,000 waiting messages, 4 sent in parallel. */
export const MAIL_QUEUE_NAME = 'mail';
export const MAIL_QUEUE_CAPACITY = 10_000;
export const MAIL_QUEUE_CONCURRENCY = 4;
/** How long this instance trusts its list of a membership's active mail hooks for one event type (as webhooks). */
export const MAILHOOK_LOOKUP_TTL_MS = 5_000;
const MAILHOOK_CHANGE_EVENTS = new Set(['MailhookCreated', 'MailhookUpdated', 'MailhookDeleted']);

const NO_VALUES: MailOnlyValues = Object.freeze({});

function isSubjectUser(recipient: MailRecipient, user: Record<string, unknown> | null): boolean {
  const address = user?.email_address;
  return typeof address === 'string' && address.toLowerCase() === recipient.email_address.toLowerCase();
}

/**
 * Sends mail hooks' messages after the events that trigger them have committed (contract "Mail
 * providers, mail hooks and the mail queue"), in the shape of the webhook dispatcher: the request
 * never waits, messages wait in a bounded queue (full: dropped and logged without address or
 * value), each message gets up to MAIL_TRY_COUNT attempts and one result event.
 */
@Injectable()
export class MailDispatcher implements BeforeApplicationShutdown {
  private readonly messages: BoundedQueue<MailItem>;
  private readonly trigger: EventTrigger<MailhookRow, MailItem>;

  constructor(
    private readonly recorder: EventRecorder,
    private readonly mailhooks: MailhookRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    registry: QueueRegistry,
    private readonly delivery: MailDelivery,
  ) {
    this.messages = new BoundedQueue<MailItem>({
      name: MAIL_QUEUE_NAME,
      capacity: MAIL_QUEUE_CAPACITY,
      concurrency: MAIL_QUEUE_CONCURRENCY,
      worker: (item) => this.deliver(item),
      // Hook and event only: the address and the values are the user's.
      onDrop: (item) => this.logger.warn({ mailhookId: item.hook.id, eventId: item.event.id }, 'mail queue is full; the message was dropped'),
      onError: (error, item) => this.logger.error({ err: error, mailhookId: item.hook.id, eventId: item.event.id }, 'mail delivery failed unexpectedly'),
    });
    registry.register(this.messages);
    this.trigger = new EventTrigger({
      hookLists: {
        maxEntries: config.cacheMaxEntries,
        ttlMs: MAILHOOK_LOOKUP_TTL_MS,
        findActiveFor: (membershipId, eventType) => this.mailhooks.findActiveFor(membershipId, eventType),
      },
      hookChangeEvents: MAILHOOK_CHANGE_EVENTS,
      triggers: (eventType) => !isResultEventType(eventType),
      lookupFailure: 'could not look up mail hooks for events',
      drain: { eventsSettled: () => this.recorder.settled(), queue: this.messages, queueName: MAIL_QUEUE_NAME, label: 'mail', logger: this.logger },
    });
    recorder.onCommitted((events, mailValues) => this.onCommitted(events, mailValues));
  }

  get queue(): BoundedQueue<MailItem> {
    return this.messages;
  }

  invalidate(membershipId: string): void {
    this.trigger.hookLists.invalidate(membershipId);
  }

  drain(timeoutMs: number): Promise<DrainResult> {
    return this.trigger.drain(timeoutMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.drain(this.config.shutdownDrainMs);
    this.trigger.close();
  }

  private onCommitted(events: readonly RecordedEvent[], mailValues: ReadonlyMap<string, MailOnlyValues>): void {
    this.trigger.onCommitted(events, (triggering) => this.enqueueMessages(triggering, mailValues));
  }

  private async enqueueMessages(events: readonly RecordedEvent[], mailValues: ReadonlyMap<string, MailOnlyValues>): Promise<void> {
    for (const event of events) {
      const hooks = await this.trigger.hookLists.activeFor(event.membershipId, event.eventType);
      if (!hooks.length) continue;
      const user = subjectUserOf(event.eventType, event.document, event.prior);
      const values = mailValues.get(event.id) ?? NO_VALUES;
      for (const hook of hooks) {
        for (const recipient of recipientsOf(hook.recipients, hook.sendToUtilizer, user)) {
          // Hook rules already keep mail-only placeholders out of hooks with other recipients; this
          // keeps the values to the subject user's own message whatever a hook holds.
          this.messages.enqueue({ hook, event, recipient, values: isSubjectUser(recipient, user) ? values : NO_VALUES });
        }
      }
    }
  }

  private async deliver(queued: MailItem): Promise<void> {
    const item = await this.asHookIsNow(queued);
    if (!item) return;
    const { attempts, result } = await this.delivery.deliver(item);
    await this.recordResult(item, attempts, result);
  }

  /**
   * The queued message with its hook as it is now, as a webhook's attempt renders with the webhook
   * as it is then: the item carries the hook as it was when its event committed, and it may have
   * waited behind slow servers since. A hook made inactive, deleted, moved to another event or no
   * longer listing the recipient sends nothing ("inactive hooks are kept, never sent"; no result
   * event is owed for a message not tried); a changed template, subject, sender or provider applies.
   */
  private async asHookIsNow(item: MailItem): Promise<MailItem | undefined> {
    let current: MailhookRow | undefined;
    try {
      current = await this.mailhooks.findById(item.hook.membershipId, item.hook.id);
    } catch (error) {
      // A failed look sends as queued: a lost message would be worse than a late change missed.
      this.logger.warn({ err: error, mailhookId: item.hook.id }, 'could not read a mail hook again; sending the queued message as it is');
      return item;
    }
    const notSent = (reason: string): undefined => {
      this.logger.info({ mailhookId: item.hook.id, eventId: item.event.id }, `mail hook ${reason} since its event; the queued message was not sent`);
      return undefined;
    };
    if (!current?.isActive) return notSent('inactive or deleted');
    if (current.event !== item.event.eventType) return notSent('moved to another event');
    const user = subjectUserOf(item.event.eventType, item.event.document, item.event.prior);
    const address = item.recipient.email_address.toLowerCase();
    const recipient = recipientsOf(current.recipients, current.sendToUtilizer, user).find((entry) => entry.email_address.toLowerCase() === address);
    if (!recipient) return notSent('no longer sending to this recipient');
    // The values stay as queued: they were handed to the subject user's own message only.
    return { ...item, hook: current, recipient };
  }

  /** One result event per message, after its last attempt: never the subject, body or values. */
  private async recordResult(item: MailItem, attempts: number, result: SmtpResult): Promise<void> {
    if (result.outcome === 'blocked') {
      this.logger.warn({ mailhookId: item.hook.id, membershipId: item.hook.membershipId }, 'mail refused by the outbound destination policy');
    }
    const document: Record<string, unknown> = {
      mailhook_id: item.hook.id,
      event_id: item.event.id,
      mail_provider: item.hook.mailProvider,
      recipients: [{ display_name: item.recipient.display_name ?? null, email_address: item.recipient.email_address }],
      attempts,
    };
    if (result.outcome !== 'sent') document.error = result.error;
    try {
      await this.recorder.record({
        membershipId: item.hook.membershipId,
        eventType: result.outcome === 'sent' ? 'MailhookMailSent' : 'MailhookMailFailed',
        utilizerId: SYSTEM_UTILIZER,
        document,
      });
    } catch (error) {
      this.logger.error({ err: error, mailhookId: item.hook.id, eventId: item.event.id }, 'could not record a mail result event');
    }
  }
}
