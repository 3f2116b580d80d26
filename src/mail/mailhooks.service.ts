import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError, validationError } from '../common/errors';
import { newId, slugify } from '../common/ids';
import { MembershipResourceService } from '../common/crud/membership-resource.service';
import { validationFailure } from '../common/validation';
import type { MailhookRow, MailRecipient } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { utilizerIdOf, type EventType } from '../events/event-types';
import { MembershipRepository } from '../memberships/membership.repository';
import { eventProblem } from '../webhooks/webhook-template-rules';
import { mailTemplateProblems } from './mail-template-rules';
import type { MailhookBodyDto } from './mailhook.dto';
import { toMailhookResponse, type MailhookResponse } from './mailhook.mapper';
import { MailhookRepository, type MailhookChanges } from './mailhook.repository';

type MailhookFields = Omit<MailhookChanges, 'modifiedAt' | 'modifiedBy'>;

/** The stored form of a create/replace body; equal bodies give equal values. */
function toFields(body: MailhookBodyDto): MailhookFields {
  const name = body.name.trim();
  const recipients: MailRecipient[] = (body.recipients ?? []).map((recipient) =>
    recipient.display_name === undefined ? { email_address: recipient.email_address } : { display_name: recipient.display_name, email_address: recipient.email_address },
  );
  return {
    name,
    // The slug follows the name; uniqueness is the database's (mailhooks_slug_unique -> 409 MailhookAlreadyExists).
    slug: slugify(name),
    description: body.description ?? null,
    event: body.event,
    isActive: body.is_active ?? true,
    mailProvider: body.mail_provider,
    fromAddress: body.from_address,
    fromName: body.from_name ?? null,
    mailSubject: body.mail_subject,
    mailFormat: body.mail_format ?? 'html',
    mailTemplate: body.mail_template,
    sendToUtilizer: body.send_to_utilizer ?? false,
    recipients,
  };
}

/** The rules class-validator cannot see: the event, and the template against event and recipients. */
function checkBody(body: MailhookBodyDto): void {
  const event = eventProblem(body.event);
  if (event) throw validationError('event', event);
  const problems = mailTemplateProblems({
    event: body.event,
    mail_subject: body.mail_subject,
    mail_template: body.mail_template,
    send_to_utilizer: body.send_to_utilizer ?? false,
    recipients: body.recipients ?? [],
  });
  if (problems.length > 0) throw validationFailure(problems);
}

@Injectable()
export class MailhooksService extends MembershipResourceService<MailhookRow, MailhookBodyDto, MailhookResponse, EventType> {
  constructor(
    private readonly mailhooks: MailhookRepository,
    private readonly memberships: MembershipRepository,
    recorder: EventRecorder,
    permissions: CallerPermissions,
  ) {
    super({ resource: 'mailhooks', entity: 'Mailhook', noun: 'mail hook', toResponse: toMailhookResponse }, mailhooks, recorder, permissions);
  }

  create(caller: Caller, membershipId: string, body: MailhookBodyDto): Promise<MailhookResponse> {
    checkBody(body);
    const fields = toFields(body);
    const utilizerId = utilizerIdOf(caller);
    return this.changes.transaction(async (record) => {
      await this.assertProviderExists(membershipId, fields.mailProvider);
      const row = await this.mailhooks.insert(membershipId, { id: newId(), ...fields, createdBy: utilizerId });
      record(this.createdEvent(membershipId, utilizerId, row));
      return toMailhookResponse(row);
    });
  }

  replace(caller: Caller, membershipId: string, id: string, body: MailhookBodyDto): Promise<MailhookResponse> {
    checkBody(body);
    const fields = toFields(body);
    const utilizerId = utilizerIdOf(caller);
    return this.changes.transaction(async (record) => {
      await this.assertProviderExists(membershipId, fields.mailProvider);
      const current = await this.lockCurrent(membershipId, id);
      this.assertChanges(current, fields);
      const updated = await this.mailhooks.replace(membershipId, id, { ...fields, modifiedAt: new Date(), modifiedBy: utilizerId });
      record(this.updatedEvent(membershipId, utilizerId, updated, current));
      return toMailhookResponse(updated);
    });
  }

  /** Under a share lock of the membership, so a PUT cannot remove the provider before this commits. */
  private async assertProviderExists(membershipId: string, slug: string): Promise<void> {
    const membership = await this.memberships.lockForShare(membershipId);
    if (!membership) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    if (!membership.mailProviders.some((provider) => provider.slug === slug)) {
      throw validationError('mail_provider', `names no entry of the membership's mail_providers: ${JSON.stringify(slug.slice(0, 64))}`);
    }
  }
}
