import { toSys, type Sys } from '../common/sys';
import type { MailhookRow, MailRecipient } from '../database/schema';
import { eventHookHead, type EventHookHead } from '../webhooks/webhook.mapper';

export interface MailhookResponse extends EventHookHead {
  is_active: boolean;
  mail_provider: string;
  from_address: string;
  from_name: string | null;
  mail_subject: string;
  mail_format: 'html' | 'text';
  mail_template: string;
  send_to_utilizer: boolean;
  recipients: MailRecipient[];
  membership_id: string;
  sys: Sys;
}

/** The answer, and the document of MailhookCreated/Updated/Deleted: a mail hook holds no secret. */
export function toMailhookResponse(row: MailhookRow): MailhookResponse {
  return {
    ...eventHookHead(row),
    is_active: row.isActive,
    mail_provider: row.mailProvider,
    from_address: row.fromAddress,
    from_name: row.fromName,
    mail_subject: row.mailSubject,
    mail_format: row.mailFormat,
    mail_template: row.mailTemplate,
    send_to_utilizer: row.sendToUtilizer,
    recipients: row.recipients,
    membership_id: row.membershipId,
    sys: toSys(row),
  };
}
