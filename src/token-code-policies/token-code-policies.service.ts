import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError, validationError } from '../common/errors';
import { newId, slugify } from '../common/ids';
import { MembershipResourceService } from '../common/crud/membership-resource.service';
import type { TokenCodePolicyRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { utilizerIdOf, type EventType } from '../events/event-types';
import type { TokenCodePolicyBodyDto } from './token-code-policy.dto';
import { toTokenCodePolicyResponse, type TokenCodePolicyResponse } from './token-code-policy.mapper';
import { TokenCodePolicyRepository } from './token-code-policy.repository';

interface PolicyFields {
  name: string;
  description: string | null;
  length: number;
  containsLetters: boolean;
  containsDigits: boolean;
  expiresIn: number;
}

function toFields(body: TokenCodePolicyBodyDto): PolicyFields {
  const fields: PolicyFields = {
    name: body.name.trim(),
    description: body.description ?? null,
    length: body.length ?? 8,
    containsLetters: body.contains_letters ?? true,
    containsDigits: body.contains_digits ?? true,
    expiresIn: body.expires_in ?? 600,
  };
  if (!fields.name) throw validationError('name', 'must not be blank');
  if (!fields.containsLetters && !fields.containsDigits) {
    throw validationError('contains_letters', 'a code needs letters, digits or both (contains_letters and contains_digits are both false)');
  }
  return fields;
}

const inUse = (): DomainError => new DomainError('TokenCodePolicyInUse', "The membership's code_policy names this policy");

@Injectable()
export class TokenCodePoliciesService extends MembershipResourceService<TokenCodePolicyRow, TokenCodePolicyBodyDto, TokenCodePolicyResponse, EventType> {
  constructor(
    private readonly policies: TokenCodePolicyRepository,
    recorder: EventRecorder,
    permissions: CallerPermissions,
  ) {
    super({ resource: 'token-code-policies', entity: 'TokenCodePolicy', noun: 'token code policy', toResponse: toTokenCodePolicyResponse }, policies, recorder, permissions);
  }

  async create(caller: Caller, membershipId: string, body: TokenCodePolicyBodyDto): Promise<TokenCodePolicyResponse> {
    return this.changes.transaction(async (record) => {
      const fields = toFields(body);
      const utilizerId = utilizerIdOf(caller);
      // Uniqueness is the database's (token_code_policies_slug_unique -> 409 TokenCodePolicyAlreadyExists).
      const row = await this.policies.insert(membershipId, { id: newId(), ...fields, slug: slugify(fields.name), createdBy: utilizerId });
      record(this.createdEvent(membershipId, utilizerId, row));
      return toTokenCodePolicyResponse(row);
    });
  }

  async replace(caller: Caller, membershipId: string, id: string, body: TokenCodePolicyBodyDto): Promise<TokenCodePolicyResponse> {
    return this.changes.transaction(async (record) => {
      const fields = toFields(body);
      const utilizerId = utilizerIdOf(caller);
      const current = await this.lockCurrent(membershipId, id);
      this.assertChanges(current, fields);
      const updated = await this.policies.replace(membershipId, id, { ...fields, modifiedAt: new Date(), modifiedBy: utilizerId });
      record(this.updatedEvent(membershipId, utilizerId, updated, current));
      return toTokenCodePolicyResponse(updated);
    });
  }

  /**
   * All or nothing: when the membership's policy is among them, nothing is deleted (409). The
   * policies are locked first (findByIds), so naming one and deleting it cannot both commit.
   */
  protected override async beforeDelete(membershipId: string, ids: readonly string[]): Promise<void> {
    const found = await this.policies.findByIds(membershipId, ids);
    if (await this.policies.inUse(membershipId, found.map((row) => row.slug))) throw inUse();
  }
}
