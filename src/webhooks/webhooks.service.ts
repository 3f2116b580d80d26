import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { validationError } from '../common/errors';
import { newId, slugify } from '../common/ids';
import { MembershipResourceService } from '../common/crud/membership-resource.service';
import type { WebhookRequestTemplate, WebhookRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { utilizerIdOf, type EventType } from '../events/event-types';
import { DestinationPolicy, destinationNotAllowed } from '../outbound/destination-policy';
import type { WebhookBodyDto } from './webhook.dto';
import { toWebhookEventDocument, toWebhookResponse, type WebhookResponse } from './webhook.mapper';
import { WebhookRepository, type WebhookChanges } from './webhook.repository';
import { urlWithFixedHost } from './webhook-template-rules';
import { DeliveryRepository } from './delivery.repository';

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

/** Omitted keeps the stored secret (it cannot be read back, so a GET-then-PUT must not erase it); null removes it. */
function nextSecret(current: string | null, requested: string | null | undefined): string | null {
  return requested === undefined ? current : requested;
}

@Injectable()
export class WebhooksService extends MembershipResourceService<WebhookRow, WebhookBodyDto, WebhookResponse, EventType> {
  constructor(
    private readonly webhooks: WebhookRepository,
    recorder: EventRecorder,
    private readonly destinations: DestinationPolicy,
    private readonly deliveries: DeliveryRepository,
    permissions: CallerPermissions,
  ) {
    super(
      { resource: 'webhooks', entity: 'Webhook', noun: 'webhook', toResponse: toWebhookResponse, toEventDocument: toWebhookEventDocument },
      webhooks,
      recorder,
      permissions,
    );
  }

  /**
   * A URL whose host is an IP literal or localhost name the outbound policy refuses is not stored
   * (contract "Outbound calls"); other hosts are judged when they are resolved, at each call.
   */
  private checkDestination(fields: WebhookFields): void {
    const url = urlWithFixedHost(fields.request.url);
    const refused = url === undefined ? undefined : this.destinations.configuredUrlProblem(url);
    if (refused !== undefined) throw validationError('request.url', destinationNotAllowed(refused));
  }

  async create(caller: Caller, membershipId: string, body: WebhookBodyDto): Promise<WebhookResponse> {
    return this.changes.transaction(async (record) => {
      const fields = toFields(body);
      this.checkDestination(fields);
      const utilizerId = utilizerIdOf(caller);
      const row = await this.webhooks.insert(membershipId, { id: newId(), ...fields, secret: body.secret ?? null, createdBy: utilizerId });
      record(this.createdEvent(membershipId, utilizerId, row));
      return toWebhookResponse(row);
    });
  }

  async replace(caller: Caller, membershipId: string, id: string, body: WebhookBodyDto): Promise<WebhookResponse> {
    return this.changes.transaction(async (record) => {
      const fields = toFields(body);
      this.checkDestination(fields);
      const utilizerId = utilizerIdOf(caller);
      const current = await this.lockCurrent(membershipId, id);
      const secret = nextSecret(current.secret, body.secret);
      this.assertChanges(current, { ...fields, secret });
      const changes: WebhookChanges = { ...fields, secret, modifiedAt: new Date(), modifiedBy: utilizerId };
      const updated = await this.webhooks.replace(membershipId, id, changes);
      // A passive webhook owes nothing more (contract "Durable webhook delivery"); a later redelivery may ask again.
      if (updated.status === 'passive') await this.deliveries.cancelPending(membershipId, [id]);
      record(this.updatedEvent(membershipId, utilizerId, updated, current));
      return toWebhookResponse(updated);
    });
  }

  /** A deleted webhook's pending deliveries end canceled, in the delete's transaction. */
  protected override async beforeDelete(membershipId: string, ids: readonly string[]): Promise<void> {
    await this.deliveries.cancelPending(membershipId, ids);
  }
}
