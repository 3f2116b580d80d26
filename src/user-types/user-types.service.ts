import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError } from '../common/errors';
import { newId, slugify } from '../common/ids';
import { bulkDeleteAnswer, parseBulkIds, type ListPage } from '../common/query';
import type { UserTypeRow } from '../database/schema';
import { RequestTransaction } from '../common/request-transaction';
import { EventRecorder } from '../events/event-recorder';
import { type QueryBody } from '../common/query/query-body';
import { validationFailure } from '../common/validation';
import { sameJson } from '../common/same-json';
import { UserTypeCache } from './user-type-cache';
import { toUserTypeResponse, type UserTypeResponse } from './user-type.mapper';
import type { UserTypeInput } from './user-type.dto';
import { UserTypeRepository } from './user-type.repository';

const notFound = (): DomainError => new DomainError('UserTypeNotFound', 'The user type does not exist');

/**
 * User types: named sets of custom-field definitions that users refer to by slug.
 *
 * Deleting a type that users still name is allowed, as deleting a role is: those users keep
 * their `user_type` and their stored custom fields (nothing is lost), and until a type with that
 * slug exists again their custom fields are checked only for safety (size, depth, names), not
 * against definitions. Changing a user to a type that does not exist is refused.
 */
@Injectable()
export class UserTypesService {
  constructor(
    private readonly repository: UserTypeRepository,
    private readonly cache: UserTypeCache,
    private readonly events: EventRecorder,
    private readonly permissions: CallerPermissions,
    private readonly transaction: RequestTransaction,
  ) {}

  async list(caller: Caller, membershipId: string, query: Record<string, unknown>, body: QueryBody = {}): Promise<ListPage<Record<string, unknown>>> {
    const hiddenIds = await this.permissions.hiddenFromLists(caller, 'user-types');
    return this.repository.list(membershipId, { query, where: body.where, select: body.select, hiddenIds });
  }

  async get(membershipId: string, id: string): Promise<UserTypeResponse> {
    const row = await this.repository.findById(membershipId, id);
    if (!row) throw notFound();
    return toUserTypeResponse(row);
  }

  async create(membershipId: string, caller: Caller, input: UserTypeInput): Promise<UserTypeResponse> {
    const slug = input.fields.slug ?? slugify(input.fields.name);
    const row = await this.repository.insert({
      id: newId(),
      membershipId,
      name: input.fields.name,
      slug,
      description: input.fields.description ?? null,
      properties: input.properties,
      allowAdditionalProperties: input.fields.allow_additional_properties ?? false,
      createdBy: caller.id,
    });
    const created = toUserTypeResponse(row);
    this.events.recordChange({ membershipId, eventType: 'UserTypeCreated', utilizerId: caller.id, document: created });
    // Forget a cached miss, so users of the new type can be written here at once.
    this.transaction.afterCommit(() => this.cache.invalidate(membershipId, slug));
    return created;
  }

  async update(membershipId: string, id: string, caller: Caller, input: UserTypeInput): Promise<UserTypeResponse> {
    const current = await this.repository.findById(membershipId, id);
    if (!current) throw notFound();
    if (input.fields.slug !== undefined && input.fields.slug !== current.slug) {
      throw validationFailure([{ field: 'slug', message: 'cannot be changed: users name their type by it' }]);
    }
    const next = {
      name: input.fields.name,
      description: input.fields.description ?? null,
      properties: input.properties as Record<string, unknown>,
      allowAdditionalProperties: input.fields.allow_additional_properties ?? false,
    };
    if (isUnchanged(current, next)) {
      throw new DomainError('IdenticalDocumentError', 'The update changes nothing');
    }
    const row = await this.repository.update(membershipId, id, { ...next, modifiedAt: new Date(), modifiedBy: caller.id });
    if (!row) throw notFound();
    this.events.recordChange({
      membershipId,
      eventType: 'UserTypeUpdated',
      utilizerId: caller.id,
      document: toUserTypeResponse(row),
      prior: toUserTypeResponse(current),
    });
    this.transaction.afterCommit(() => this.cache.invalidate(membershipId, row.slug));
    return toUserTypeResponse(row);
  }

  async remove(membershipId: string, id: string, caller: Caller): Promise<void> {
    const [deleted] = await this.deleteAndRecord(membershipId, [id], caller);
    if (!deleted) throw notFound();
  }

  async removeMany(membershipId: string, body: unknown, caller: Caller): Promise<{ deleted: string[]; not_found: string[] }> {
    const ids = parseBulkIds(body);
    await this.permissions.assertMayActOnEach(caller, 'user-types', 'delete', ids);
    const deleted = await this.deleteAndRecord(membershipId, ids, caller);
    return bulkDeleteAnswer(
      ids,
      deleted.map((row) => row.id),
    );
  }

  private async deleteAndRecord(membershipId: string, ids: readonly string[], caller: Caller): Promise<UserTypeRow[]> {
    const deleted = await this.repository.deleteByIds(membershipId, ids);
    for (const row of deleted) {
      this.events.recordChange({ membershipId, eventType: 'UserTypeDeleted', utilizerId: caller.id, document: {}, prior: toUserTypeResponse(row) });
    }
    this.transaction.afterCommit(() => {
      for (const row of deleted) this.cache.invalidate(membershipId, row.slug);
    });
    return deleted;
  }
}

function isUnchanged(
  current: UserTypeRow,
  next: { name: string; description: string | null; properties: Record<string, unknown>; allowAdditionalProperties: boolean },
): boolean {
  return (
    current.name === next.name &&
    current.description === next.description &&
    current.allowAdditionalProperties === next.allowAdditionalProperties &&
    sameJson(current.properties, next.properties)
  );
}
