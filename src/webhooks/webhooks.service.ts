import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError, validationError } from '../common/errors';
import { slugify } from '../common/ids';
import { newId } from '../common/ids';
import { bulkDeleteAnswer, parseBulkIds, type ListPage } from '../common/query';
import type { WebhookRequestTemplate, WebhookRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { utilizerIdOf } from '../events/event-types';
import type { QueryBody } from '../common/query/query-body';
import { sameJson } from '../common/same-json';
import { DESTINATION_NOT_ALLOWED, DestinationPolicy } from '../outbound/destination-policy';
import type { WebhookBodyDto } from './webhook.dto';
import { toWebhookEventDocument, toWebhookResponse, type WebhookResponse } from './webhook.mapper';
import { WebhookRepository, type WebhookChanges } from './webhook.repository';
import { urlWithFixedHost } from './webhook-template-rules';

/** The stored form of a create/replace body; equal bodies give equal values. */
interface WebhookFields {
  name: string;
  slug: string;
  description: string | null;
  event: string;
  status: 'active' | 'passive';
  tryCount: number;
  request: WebhookRequestTemplate;
}

function toFields(body: WebhookBodyDto): WebhookFields {
  const name = body.name.trim();
  const request: WebhookRequestTemplate = {
    method: body.request.method.toUpperCase(),
    url: body.request.url,
    uncoveredBody: body.request.uncoveredBody === true,
  };
  if (body.request.headers && Object.keys(body.request.headers).length > 0) request.headers = { ...body.request.headers };
  if (body.request.body !== undefined && body.request.body !== null) request.body = body.request.body;
  return {
    name,
    // The slug follows the name; uniqueness is the database's (webhooks_slug_unique -> 409 WebhookAlreadyExists).
    slug: slugify(name),
    description: body.description ?? null,
    event: body.event,
    status: body.status,
    tryCount: body.try_count,
    request,
  };
}

function sameFields(row: WebhookRow, fields: WebhookFields): boolean {
  return (
    row.name === fields.name &&
    row.slug === fields.slug &&
    row.description === fields.description &&
    row.event === fields.event &&
    row.status === fields.status &&
    row.tryCount === fields.tryCount &&
    sameJson(row.request, fields.request)
  );
}

/** Omitted keeps the stored secret (it cannot be read back, so a GET-then-PUT must not erase it); null removes it. */
function nextSecret(current: string | null, requested: string | null | undefined): string | null {
  return requested === undefined ? current : requested;
}

@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly recorder: EventRecorder,
    private readonly destinations: DestinationPolicy,
    private readonly permissions: CallerPermissions,
  ) {}

  /**
   * A URL whose host is an IP literal or localhost name the outbound policy refuses is not stored
   * (contract "Outbound calls"); other hosts are judged when they are resolved, at each call.
   */
  private checkDestination(fields: WebhookFields): void {
    const url = urlWithFixedHost(fields.request.url);
    if (url !== undefined && this.destinations.configuredUrlProblem(url) !== undefined) {
      throw validationError('request.url', DESTINATION_NOT_ALLOWED);
    }
  }

  async get(membershipId: string, id: string): Promise<WebhookResponse> {
    const row = await this.webhooks.findById(membershipId, id);
    if (!row) throw notFound();
    return toWebhookResponse(row);
  }

  /** List and `_query`: without the webhooks a forbidden entry denies the caller reading. */
  async list(caller: Caller, membershipId: string, query: Record<string, unknown>, body: QueryBody = {}): Promise<ListPage<Record<string, unknown>>> {
    const hiddenIds = await this.permissions.hiddenFromLists(caller, 'webhooks');
    return this.webhooks.list(membershipId, { query, ...body, hiddenIds });
  }

  async create(membershipId: string, caller: Caller, body: WebhookBodyDto): Promise<WebhookResponse> {
    const fields = toFields(body);
    this.checkDestination(fields);
    const utilizerId = utilizerIdOf(caller);
    const row = await this.webhooks.insert(membershipId, { id: newId(), ...fields, secret: body.secret ?? null, createdBy: utilizerId });
    this.recorder.recordChange({ membershipId, eventType: 'WebhookCreated', utilizerId, document: toWebhookEventDocument(row) });
    return toWebhookResponse(row);
  }

  async replace(membershipId: string, id: string, caller: Caller, body: WebhookBodyDto): Promise<WebhookResponse> {
    const fields = toFields(body);
    this.checkDestination(fields);
    const utilizerId = utilizerIdOf(caller);
    const current = await this.webhooks.findByIdForUpdate(membershipId, id);
    if (!current) throw notFound();
    const secret = nextSecret(current.secret, body.secret);
    if (sameFields(current, fields) && secret === current.secret) {
      throw new DomainError('IdenticalDocumentError', 'The update changes nothing');
    }
    const changes: WebhookChanges = { ...fields, secret, modifiedAt: new Date(), modifiedBy: utilizerId };
    const updated = await this.webhooks.replace(membershipId, id, changes);
    this.recorder.recordChange({ membershipId, eventType: 'WebhookUpdated', utilizerId, document: toWebhookEventDocument(updated), prior: toWebhookEventDocument(current) });
    return toWebhookResponse(updated);
  }

  async delete(membershipId: string, id: string, caller: Caller): Promise<void> {
    const utilizerId = utilizerIdOf(caller);
    const deleted = await this.webhooks.deleteById(membershipId, id);
    if (!deleted) throw notFound();
    this.recorder.recordChange({ membershipId, eventType: 'WebhookDeleted', utilizerId, document: {}, prior: toWebhookEventDocument(deleted) });
  }

  async deleteMany(membershipId: string, caller: Caller, body: unknown): Promise<{ deleted: string[]; not_found: string[] }> {
    const ids = parseBulkIds(body);
    await this.permissions.assertMayActOnEach(caller, 'webhooks', 'delete', ids);
    const utilizerId = utilizerIdOf(caller);
    const deleted = await this.webhooks.deleteByIds(membershipId, ids);
    for (const row of deleted) {
      this.recorder.recordChange({ membershipId, eventType: 'WebhookDeleted', utilizerId, document: {}, prior: toWebhookEventDocument(row) });
    }
    return bulkDeleteAnswer(ids, deleted.map((row) => row.id));
  }
}

function notFound(): DomainError {
  return new DomainError('WebhookNotFound', 'The webhook does not exist');
}
