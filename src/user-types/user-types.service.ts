import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { newId, slugify } from '../common/ids';
import { MembershipResourceService } from '../common/crud/membership-resource.service';
import type { UserTypeRow } from '../database/schema';
import { RequestTransaction } from '../common/request-transaction';
import { EventRecorder } from '../events/event-recorder';
import type { EventType } from '../events/event-types';
import { validationFailure } from '../common/validation';
import { UserTypeCache } from './user-type-cache';
import { toUserTypeResponse, type UserTypeResponse } from './user-type.mapper';
import type { UserTypeInput } from './user-type.dto';
import { UserTypeRepository } from './user-type.repository';

/**
 * User types: named sets of custom-field definitions that users refer to by slug.
 *
 * Deleting a type that users still name is allowed, as deleting a role is: those users keep
 * their `user_type` and their stored custom fields (nothing is lost), and until a type with that
 * slug exists again their custom fields are checked only for safety (size, depth, names), not
 * against definitions. Changing a user to a type that does not exist is refused.
 */
@Injectable()
export class UserTypesService extends MembershipResourceService<UserTypeRow, UserTypeInput, UserTypeResponse, EventType> {
  constructor(
    private readonly repository: UserTypeRepository,
    private readonly cache: UserTypeCache,
    events: EventRecorder,
    permissions: CallerPermissions,
    private readonly transaction: RequestTransaction,
  ) {
    super({ resource: 'user-types', entity: 'UserType', noun: 'user type', toResponse: toUserTypeResponse }, repository, events, permissions);
  }

  async create(caller: Caller, membershipId: string, input: UserTypeInput): Promise<UserTypeResponse> {
    return this.changes.transaction(async (record) => {
      const slug = input.fields.slug ?? slugify(input.fields.name);
      const row = await this.repository.insert(membershipId, {
        id: newId(),
        name: input.fields.name,
        slug,
        description: input.fields.description ?? null,
        properties: input.properties,
        allowAdditionalProperties: input.fields.allow_additional_properties ?? false,
        createdBy: caller.id,
      });
      record(this.createdEvent(membershipId, caller.id, row));
      // Forget a cached miss, so users of the new type can be written here at once.
      this.transaction.afterCommit(() => this.cache.invalidate(membershipId, slug));
      return toUserTypeResponse(row);
    });
  }

  async replace(caller: Caller, membershipId: string, id: string, input: UserTypeInput): Promise<UserTypeResponse> {
    return this.changes.transaction(async (record) => {
      const current = await this.repository.findById(membershipId, id);
      if (!current) throw this.notFound();
      if (input.fields.slug !== undefined && input.fields.slug !== current.slug) {
        throw validationFailure([{ field: 'slug', message: 'cannot be changed: users name their type by it' }]);
      }
      const next = {
        name: input.fields.name,
        description: input.fields.description ?? null,
        properties: input.properties as Record<string, unknown>,
        allowAdditionalProperties: input.fields.allow_additional_properties ?? false,
      };
      this.assertChanges(current, next);
      const row = await this.repository.update(membershipId, id, { ...next, modifiedAt: new Date(), modifiedBy: caller.id });
      if (!row) throw this.notFound();
      record(this.updatedEvent(membershipId, caller.id, row, current));
      this.transaction.afterCommit(() => this.cache.invalidate(membershipId, row.slug));
      return toUserTypeResponse(row);
    });
  }

  /** Forget them once the deletes commit, so that users naming them are checked as of a type that does not exist. */
  protected override afterDelete(membershipId: string, deleted: readonly UserTypeRow[]): void {
    this.transaction.afterCommit(() => {
      for (const row of deleted) this.cache.invalidate(membershipId, row.slug);
    });
  }
}
