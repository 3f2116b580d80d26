import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { MailhookRow, MailRecipient } from '../database/schema';
import type { RecordedEvent } from '../events/event-recorder';
import { MembershipCache } from '../memberships/membership-cache';
import { TemplateError } from '../webhooks/template';
import { type MailContext, type MailOnlyValues, renderMailBody, renderSubject, subjectUserOf } from './mail-render';
import { SmtpEgress } from './smtp-egress';
import { MAX_ERROR_LENGTH, type SmtpResult } from './smtp-sender';

/** One message: one hook, one event, one recipient. Values are in memory only and die with the item. */
export interface MailItem {
  hook: MailhookRow;
  event: RecordedEvent;
  recipient: MailRecipient;
  values: MailOnlyValues;
}

/** How a message ended: the attempts made (0: none could be made) and the last one's result. */
export interface MailOutcome {
  attempts: number;
  result: SmtpResult;
}

/**
 * One mail hook message, from the hook and its event to the SMTP server: the membership's mail
 * provider, the subject and body rendered, and up to MAIL_TRY_COUNT attempts while a failure is
 * retryable. The dispatcher records the outcome.
 */
@Injectable()
export class MailDelivery {
  constructor(
    private readonly memberships: MembershipCache,
    private readonly smtp: SmtpEgress,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async deliver(item: MailItem): Promise<MailOutcome> {
    const { hook, event, recipient } = item;
    const membership = await this.memberships.get(hook.membershipId);
    const provider = membership?.mailProviders.find((entry) => entry.slug === hook.mailProvider);
    if (!membership || !provider) {
      return { attempts: 0, result: { outcome: 'failed', retryable: false, error: `the mail provider ${JSON.stringify(hook.mailProvider)} no longer exists` } };
    }
    const ctx: MailContext = {
      event_type: event.eventType,
      utilizer_id: event.utilizerId,
      event_time: event.eventTime.toISOString(),
      membership_id: event.membershipId,
      document: event.document,
      prior: event.prior ?? null,
      membership: { name: membership.name, slug: membership.slug },
      user: subjectUserOf(event.eventType, event.document, event.prior),
      values: item.values,
    };
    let subject: string;
    let body: string;
    try {
      subject = renderSubject(hook.mailSubject, ctx);
      body = renderMailBody(hook.mailTemplate, hook.mailFormat, ctx);
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return { attempts: 0, result: { outcome: 'failed', retryable: false, error: error.message.slice(0, MAX_ERROR_LENGTH) } };
    }
    const from: MailRecipient = hook.fromName ? { display_name: hook.fromName, email_address: hook.fromAddress } : { email_address: hook.fromAddress };
    let attempts = 0;
    let result: SmtpResult = { outcome: 'failed', retryable: false, error: 'not sent' };
    while (attempts < this.config.mailTryCount) {
      attempts++;
      result = await this.smtp.send(provider, { from, to: recipient, subject, body, format: hook.mailFormat });
      if (result.outcome === 'sent' || !result.retryable) break;
    }
    return { attempts, result };
  }
}
