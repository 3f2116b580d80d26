import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError, validationError } from '../common/errors';
import { newId, slugify } from '../common/ids';
import { bulkDeleteAnswer, parseBulkIds, type ListPage } from '../common/query';
import type { QueryBody } from '../common/query/query-body';
import type { TokenCodePolicyRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { utilizerIdOf } from '../events/event-types';
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

const sameFields = (row: TokenCodePolicyRow, fields: PolicyFields): boolean =>
  row.name === fields.name &&
  row.description === fields.description &&
  row.length === fields.length &&
  row.containsLetters === fields.containsLetters &&
  row.containsDigits === fields.containsDigits &&
  row.expiresIn === fields.expiresIn;

const notFound = (): DomainError => new DomainError('TokenCodePolicyNotFound', 'The token code policy does not exist');
const inUse = (): DomainError => new DomainError('TokenCodePolicyInUse', "The membership's code_policy names this policy");

@Injectable()
export class TokenCodePoliciesService {
  constructor(
    private readonly policies: TokenCodePolicyRepository,
    private readonly recorder: EventRecorder,
    private readonly permissions: CallerPermissions,
  ) {}

  async get(membershipId: string, id: string): Promise<TokenCodePolicyResponse> {
    const row = await this.policies.findById(membershipId, id);
    if (!row) throw notFound();
    return toTokenCodePolicyResponse(row);
  }

  async list(caller: Caller, membershipId: string, query: Record<string, unknown>, body: QueryBody = {}): Promise<ListPage<Record<string, unknown>>> {
    const hiddenIds = await this.permissions.hiddenFromLists(caller, 'token-code-policies');
    return this.policies.list(membershipId, { query, ...body, hiddenIds });
  }

  async create(membershipId: string, caller: Caller, body: TokenCodePolicyBodyDto): Promise<TokenCodePolicyResponse> {
    const fields = toFields(body);
    const utilizerId = utilizerIdOf(caller);
    // Uniqueness is the database's (token_code_policies_slug_unique -> 409 TokenCodePolicyAlreadyExists).
    const row = await this.policies.insert(membershipId, { id: newId(), ...fields, slug: slugify(fields.name), createdBy: utilizerId });
    const document = toTokenCodePolicyResponse(row);
    this.recorder.recordChange({ membershipId, eventType: 'TokenCodePolicyCreated', utilizerId, document });
    return document;
  }

  async replace(membershipId: string, id: string, caller: Caller, body: TokenCodePolicyBodyDto): Promise<TokenCodePolicyResponse> {
    const fields = toFields(body);
    const utilizerId = utilizerIdOf(caller);
    const current = await this.policies.findByIdForUpdate(membershipId, id);
    if (!current) throw notFound();
    if (sameFields(current, fields)) throw new DomainError('IdenticalDocumentError', 'The update changes nothing');
    const updated = await this.policies.replace(membershipId, id, { ...fields, modifiedAt: new Date(), modifiedBy: utilizerId });
    const document = toTokenCodePolicyResponse(updated);
    this.recorder.recordChange({ membershipId, eventType: 'TokenCodePolicyUpdated', utilizerId, document, prior: toTokenCodePolicyResponse(current) });
    return document;
  }

  async delete(membershipId: string, id: string, caller: Caller): Promise<void> {
    const utilizerId = utilizerIdOf(caller);
    const current = await this.policies.findByIdForUpdate(membershipId, id);
    if (!current) throw notFound();
    if (await this.policies.inUse(membershipId, [current.slug])) throw inUse();
    const deleted = await this.policies.deleteById(membershipId, id);
    if (!deleted) throw notFound();
    this.recorder.recordChange({ membershipId, eventType: 'TokenCodePolicyDeleted', utilizerId, document: {}, prior: toTokenCodePolicyResponse(deleted) });
  }

  /** All or nothing: when the membership's policy is among them, nothing is deleted (409). */
  async deleteMany(membershipId: string, caller: Caller, body: unknown): Promise<{ deleted: string[]; not_found: string[] }> {
    const ids = parseBulkIds(body);
    await this.permissions.assertMayActOnEach(caller, 'token-code-policies', 'delete', ids);
    const utilizerId = utilizerIdOf(caller);
    const found = await this.policies.findByIds(membershipId, ids);
    if (await this.policies.inUse(membershipId, found.map((row) => row.slug))) throw inUse();
    const deleted = await this.policies.deleteByIds(membershipId, ids);
    for (const row of deleted) {
      this.recorder.recordChange({ membershipId, eventType: 'TokenCodePolicyDeleted', utilizerId, document: {}, prior: toTokenCodePolicyResponse(row) });
    }
    return bulkDeleteAnswer(ids, deleted.map((row) => row.id));
  }
}
