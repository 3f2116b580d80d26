import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError, validationError } from '../common/errors';
import { newId, slugify } from '../common/ids';
import { bulkDeleteAnswer, parseBulkIds, type ListPage } from '../common/query';
import type { QueryBody } from '../common/query/query-body';
import { sameJson } from '../common/same-json';
import { validationFailure } from '../common/validation';
import type { MailhookRow, MailRecipient } from '../database/schema';
import type { Tx } from '../database/database';
import { EventRecorder } from '../events/event-recorder';
import { utilizerIdOf } from '../events/event-types';
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

function sameFields(row: MailhookRow, fields: MailhookFields): boolean {
  return (Object.keys(fields) as (keyof MailhookFields)[]).every((key) => sameJson(row[key], fields[key]));
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
export class MailhooksService {
  constructor(
    private readonly mailhooks: MailhookRepository,
    private readonly memberships: MembershipRepository,
    private readonly recorder: EventRecorder,
    private readonly permissions: CallerPermissions,
  ) {}

  async get(membershipId: string, id: string): Promise<MailhookResponse> {
    const row = await this.mailhooks.findById(membershipId, id);
    if (!row) throw notFound();
    return toMailhookResponse(row);
  }

  /** List and `_query`: without the mail hooks a forbidden entry denies the caller reading. */
  async list(caller: Caller, membershipId: string, query: Record<string, unknown>, body: QueryBody = {}): Promise<ListPage<Record<string, unknown>>> {
    const hiddenIds = await this.permissions.hiddenFromLists(caller, 'mailhooks');
    return this.mailhooks.list(membershipId, { query, ...body, hiddenIds });
  }

  create(membershipId: string, caller: Caller, body: MailhookBodyDto): Promise<MailhookResponse> {
    checkBody(body);
    const fields = toFields(body);
    const utilizerId = utilizerIdOf(caller);
    return this.recorder.transaction(async (tx, record) => {
      await this.assertProviderExists(tx, membershipId, fields.mailProvider);
      const row = await this.mailhooks.insert(membershipId, { id: newId(), ...fields, createdBy: utilizerId }, tx);
      const document = toMailhookResponse(row);
      record({ membershipId, eventType: 'MailhookCreated', utilizerId, document });
      return document;
    });
  }

  replace(membershipId: string, id: string, caller: Caller, body: MailhookBodyDto): Promise<MailhookResponse> {
    checkBody(body);
    const fields = toFields(body);
    const utilizerId = utilizerIdOf(caller);
    return this.recorder.transaction(async (tx, record) => {
      await this.assertProviderExists(tx, membershipId, fields.mailProvider);
      const current = await this.mailhooks.findByIdForUpdate(membershipId, id, tx);
      if (!current) throw notFound();
      if (sameFields(current, fields)) throw new DomainError('IdenticalDocumentError', 'The update changes nothing');
      const updated = await this.mailhooks.replace(membershipId, id, { ...fields, modifiedAt: new Date(), modifiedBy: utilizerId }, tx);
      const document = toMailhookResponse(updated);
      record({ membershipId, eventType: 'MailhookUpdated', utilizerId, document, prior: toMailhookResponse(current) });
      return document;
    });
  }

  async delete(membershipId: string, id: string, caller: Caller): Promise<void> {
    const utilizerId = utilizerIdOf(caller);
    await this.recorder.transaction(async (tx, record) => {
      const deleted = await this.mailhooks.deleteById(membershipId, id, tx);
      if (!deleted) throw notFound();
      record({ membershipId, eventType: 'MailhookDeleted', utilizerId, document: {}, prior: toMailhookResponse(deleted) });
    });
  }

  async deleteMany(membershipId: string, caller: Caller, body: unknown): Promise<{ deleted: string[]; not_found: string[] }> {
    const ids = parseBulkIds(body);
    await this.permissions.assertMayActOnEach(caller, 'mailhooks', 'delete', ids);
    const utilizerId = utilizerIdOf(caller);
    const deleted = await this.recorder.transaction(async (tx, record) => {
      const rows = await this.mailhooks.deleteByIds(membershipId, ids, tx);
      for (const row of rows) {
        record({ membershipId, eventType: 'MailhookDeleted', utilizerId, document: {}, prior: toMailhookResponse(row) });
      }
      return rows;
    });
    return bulkDeleteAnswer(ids, deleted.map((row) => row.id));
  }

  /** Under a share lock of the membership, so a PUT cannot remove the provider before this commits. */
  private async assertProviderExists(tx: Tx, membershipId: string, slug: string): Promise<void> {
    const membership = await this.memberships.lockForShare(tx, membershipId);
    if (!membership) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    if (!membership.mailProviders.some((provider) => provider.slug === slug)) {
      throw validationError('mail_provider', `names no entry of the membership's mail_providers: ${JSON.stringify(slug.slice(0, 64))}`);
    }
  }
}

function notFound(): DomainError {
  return new DomainError('MailhookNotFound', 'The mail hook does not exist');
}
