import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError, type FieldError, userNotFound } from '../common/errors';
import { newId } from '../common/ids';
import { bulkDeleteAnswer, parseBulkIds, type ListPage } from '../common/query';
import type { UserRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { MembershipCache } from '../memberships/membership-cache';
import { assertHoldsGrants, grantedByAssignment, PermissionExpression, type Decision, type Granter } from '../permissions';
import { assertMayTakeOver, loadAssignment } from '../roles/assignment';
import { RoleRepository } from '../roles/role.repository';
import { TokenRevoker } from '../sessions/token-revoker';
import { storedDefinitions, validateCustomFields, type CustomFieldSchema, type ValidatedCustomFields } from '../user-types/custom-fields';
import { UserTypeCache } from '../user-types/user-type-cache';
import { PasswordHasher } from './password-hasher';
import { USER_CHALLENGES, type UserChallenges } from './user-challenges';
import type { MailOnlyValues } from '../events/event-recorder';
import { type QueryBody } from '../common/query/query-body';
import { validationFailure } from '../common/validation';
import { sameJson } from '../common/same-json';
import type { CreateUserFieldsDto, UserFieldsDto, UserInput } from './user.dto';
import { toUserResponse, type UserResponse } from './user.mapper';
import { UserRepository } from './user.repository';


/** Longest search keyword. */
export const MAX_KEYWORD_LENGTH = 128;

/**
 * Fields of a user that only a real `users.update` permission may change, by their API names.
 * Unique custom fields join them under their own names: a uniqueness answer (409) would tell a
 * caller what another user holds.
 */
type PrivilegedField = 'username' | 'email_address' | 'role' | 'user_type' | 'permissions' | 'forbidden' | 'is_active' | `custom field ${string}`;

/** A user's state as PUT replaces it, in row terms. */
interface UserState {
  username: string;
  emailAddress: string;
  firstname: string | null;
  lastname: string | null;
  role: string | null;
  userType: string | null;
  permissions: string[];
  forbidden: string[];
  isActive: boolean;
  customFields: Record<string, unknown>;
}

/** Revocation reasons stored with the sessions. */
const REVOKE_REASON = {
  frozen: 'user_frozen',
  deleted: 'user_deleted',
} as const;

/** Each entry must parse as a permission expression: 400 InvalidPermission naming it otherwise. */
function checkPermissionList(field: 'permissions' | 'forbidden', entries: readonly unknown[] | undefined): string[] {
  const list = entries ?? [];
  const errors: FieldError[] = [];
  list.forEach((entry, index) => {
    if (PermissionExpression.tryParse(entry) === null) {
      const shown = typeof entry === 'string' ? JSON.stringify(entry.slice(0, 64)) : 'a non-string value';
      errors.push({ field: `${field}.${index}`, message: `${shown} is not a valid permission expression` });
    }
  });
  if (errors.length) {
    throw new DomainError('InvalidPermission', `${errors[0].field}: ${errors[0].message}`, errors);
  }
  return list as string[];
}

function changedPrivilegedFields(current: UserRow, next: UserState, uniqueFields: readonly string[] = []): PrivilegedField[] {
  const changed: PrivilegedField[] = [];
  if (next.username !== current.username) changed.push('username');
  if (next.emailAddress !== current.emailAddress) changed.push('email_address');
  if (next.role !== current.role) changed.push('role');
  if (next.userType !== current.userType) changed.push('user_type');
  if (!sameJson(next.permissions, current.permissions)) changed.push('permissions');
  if (!sameJson(next.forbidden, current.forbidden)) changed.push('forbidden');
  if (next.isActive !== current.isActive) changed.push('is_active');
  for (const name of uniqueFields) {
    if (!sameJson(next.customFields[name], current.customFields[name])) changed.push(`custom field ${name}`);
  }
  return changed;
}

function isUnchanged(current: UserRow, next: UserState): boolean {
  return (
    changedPrivilegedFields(current, next).length === 0 &&
    next.firstname === current.firstname &&
    next.lastname === current.lastname &&
    sameJson(next.customFields, current.customFields)
  );
}

/** A caller acting on its own record only through the own-record rule, not through a permission it holds. */
function onlyOwnRecord(decision: Decision | undefined): boolean {
  return decision?.reason === 'own_record';
}

/**
 * Users of a membership. Passwords are hashed (argon2id) outside transactions and only after the
 * whole body is valid, so a refused request costs no hashing. Every change records its event in
 * the same transaction; no response or event carries the password hash.
 */
@Injectable()
export class UsersService {
  constructor(
    private readonly repository: UserRepository,
    private readonly hasher: PasswordHasher,
    private readonly events: EventRecorder,
    private readonly revoker: TokenRevoker,
    private readonly roles: RoleRepository,
    private readonly memberships: MembershipCache,
    private readonly userTypes: UserTypeCache,
    private readonly permissions: CallerPermissions,
    @Inject(USER_CHALLENGES) private readonly challenges: UserChallenges,
  ) {}

  async list(caller: Caller, membershipId: string, query: Record<string, unknown>, body: QueryBody = {}): Promise<ListPage<Record<string, unknown>>> {
    const hiddenIds = await this.permissions.hiddenFromLists(caller, 'users');
    return this.repository.list(membershipId, { query, where: body.where, select: body.select, hiddenIds });
  }

  async search(caller: Caller, membershipId: string, keyword: unknown, query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    if (typeof keyword !== 'string' || keyword.length === 0 || keyword.length > MAX_KEYWORD_LENGTH) {
      throw validationFailure([{ field: 'keyword', message: `must be one string of 1 to ${MAX_KEYWORD_LENGTH} characters` }]);
    }
    const { keyword: _keyword, ...listParams } = query;
    const hiddenIds = await this.permissions.hiddenFromLists(caller, 'users');
    return this.repository.search(membershipId, keyword, { query: listParams, hiddenIds });
  }

  async get(membershipId: string, id: string): Promise<UserResponse> {
    const row = await this.repository.findById(membershipId, id);
    if (!row) throw userNotFound();
    return toUserResponse(row);
  }

  async create(membershipId: string, caller: Caller, input: UserInput<CreateUserFieldsDto>): Promise<UserResponse> {
    const fields = input.fields;
    const state = await this.validatedState(membershipId, fields, input.customFields, null);
    const membership = await this.memberships.get(membershipId);
    // Under `user_activation: passive` a user created without is_active starts inactive and may activate itself.
    const awaitsActivation = fields.is_active === undefined && membership?.userActivation === 'passive';
    const isActive = fields.is_active ?? !awaitsActivation;
    // Checked before hashing too, so that a request bound to fail costs no hash.
    await this.requireRole(membershipId, state.next.role, null);
    const granter = await this.permissions.granterOf(caller);
    await this.requireHeldGrants(granter, membershipId, null, state.next);
    await this.requireFreeLogin(membershipId, state.next);
    const passwordHash = await this.hasher.hash(fields.password);

    const created = await this.events.transaction(async (record) => {
      // Again in the transaction: the role may have changed while the password was hashed.
      await this.requireHeldGrants(granter, membershipId, null, state.next);
      await this.requireFreeLogin(membershipId, state.next);
      await this.requireUniqueCustomFields(membershipId, state.next.userType, state.custom);
      const row = await this.repository.insert({
        id: newId(),
        membershipId,
        passwordHash,
        ...state.next,
        isActive,
        createdBy: caller.id,
      });
      const mailValues: MailOnlyValues | undefined = awaitsActivation && membership ? await this.challenges.openActivation(membership, row.id) : undefined;
      record({ membershipId, eventType: 'UserCreated', utilizerId: caller.id, document: toUserResponse(row) }, mailValues);
      return row;
    });
    return toUserResponse(created);
  }

  /**
   * PUT: replaces the mutable fields (left-out optional fields are cleared; `is_active` left out
   * is kept). A caller let through only by the own-record rule may change its names and custom
   * fields other than unique ones, nothing else (403, before any uniqueness check). Whatever the
   * change grants (Grants), the caller must hold.
   */
  async update(membershipId: string, id: string, caller: Caller, decision: Decision | undefined, input: UserInput<UserFieldsDto>): Promise<UserResponse> {
    const current = await this.repository.findById(membershipId, id);
    if (!current) throw userNotFound();
    const state = await this.validatedState(membershipId, input.fields, input.customFields, current);
    // Read before the transaction: the role cache may query the database.
    const granter = await this.permissions.granterOf(caller);

    const updated = await this.events.transaction(async (record) => {
      const locked = await this.repository.findByIdForUpdate(membershipId, id);
      if (!locked) throw userNotFound();
      const next: UserState = { ...state.next, isActive: input.fields.is_active ?? locked.isActive };
      const privileged = changedPrivilegedFields(locked, next, state.uniqueFields);
      if (onlyOwnRecord(decision) && privileged.length) {
        throw new DomainError('AccessDenied', `Changing ${privileged.join(', ')} needs the users.update permission`);
      }
      if (isUnchanged(locked, next)) throw new DomainError('IdenticalDocumentError', 'The update changes nothing');
      await this.requireRole(membershipId, next.role, locked.role);
      await this.requireHeldGrants(granter, membershipId, locked, next);
      // Another user's address decides where its reset mail goes: changing it takes the account over.
      const someoneElse = !(caller.kind === 'user' && caller.id === id);
      if (someoneElse && privileged.includes('email_address')) await assertMayTakeOver(granter, this.roles, membershipId, locked);
      if (privileged.includes('username') || privileged.includes('email_address')) {
        await this.requireFreeLogin(membershipId, next, { exceptId: id });
      }
      await this.requireUniqueCustomFields(membershipId, next.userType, state.custom, id);
      const row = await this.repository.update(membershipId, id, { ...next, modifiedAt: new Date(), modifiedBy: caller.id });
      if (!row) throw userNotFound();
      record({
        membershipId,
        eventType: 'UserUpdated',
        utilizerId: caller.id,
        document: toUserResponse(row),
        prior: toUserResponse(locked),
      });
      // An admin's word on is_active ends a pending self-activation (as `setActive`).
      if (input.fields.is_active !== undefined) await this.challenges.endPending(membershipId, id, 'activation');
      // A token mailed to the old address must not act for the new one (contract, "Decisions of the third review").
      if (row.emailAddress !== locked.emailAddress) {
        // A new address is unproven until a mailed token or a provider proves it (the ID token's email_verified).
        await this.repository.setEmailVerified(membershipId, id, row.emailAddress, null);
        await this.challenges.endPending(membershipId, id, 'reset');
        await this.challenges.endPending(membershipId, id, 'activation');
      }
      // An inactive user has no live session, whichever route made it inactive (as `setActive`).
      if (!row.isActive) await this.revoker.revokeAllOfUser(record, membershipId, id, caller.id, REVOKE_REASON.frozen);
      return row;
    });
    return toUserResponse(updated);
  }

  /**
   * Activates or freezes a user. Idempotent: a user already in that state is answered as it is,
   * without an event. Freezing also revokes every session of the user, so each of its tokens
   * answers 401 at once, and sign-in answers 401 UserInactive until it is activated again.
   */
  async setActive(membershipId: string, id: string, caller: Caller, decision: Decision | undefined, active: boolean): Promise<UserResponse> {
    if (onlyOwnRecord(decision)) {
      throw new DomainError('AccessDenied', 'Activating or freezing a user needs the users.update permission');
    }
    const row = await this.events.transaction(async (record) => {
      const locked = await this.repository.findByIdForUpdate(membershipId, id);
      if (!locked) throw userNotFound();
      let result = locked;
      if (locked.isActive !== active) {
        const updated = await this.repository.update(membershipId, id, { isActive: active, modifiedAt: new Date(), modifiedBy: caller.id });
        if (!updated) throw userNotFound();
        record({
          membershipId,
          eventType: 'UserUpdated',
          utilizerId: caller.id,
          document: toUserResponse(updated),
          prior: toUserResponse(locked),
        });
        result = updated;
      }
      // Either way a pending self-activation ends: a frozen user cannot activate itself.
      await this.challenges.endPending(membershipId, id, 'activation');
      // Also when already frozen: a session that outlived an earlier freeze cannot stay usable.
      if (!active) await this.revoker.revokeAllOfUser(record, membershipId, id, caller.id, REVOKE_REASON.frozen);
      return result;
    });
    return toUserResponse(row);
  }

  async remove(membershipId: string, id: string, caller: Caller): Promise<void> {
    const [deleted] = await this.deleteAndRecord(membershipId, [id], caller);
    if (!deleted) throw userNotFound();
  }

  async removeMany(membershipId: string, body: unknown, caller: Caller): Promise<{ deleted: string[]; not_found: string[] }> {
    const ids = parseBulkIds(body);
    await this.permissions.assertMayActOnEach(caller, 'users', 'delete', ids);
    const deleted = await this.deleteAndRecord(membershipId, ids, caller);
    return bulkDeleteAnswer(
      ids,
      deleted.map((row) => row.id),
    );
  }

  /**
   * Deleting a user deletes its sessions with it (foreign key cascade). They are revoked first,
   * in the same transaction, so that the event log shows a TokenRevoked for each session that
   * ended with the user, as for every other way a session ends.
   */
  private deleteAndRecord(membershipId: string, ids: readonly string[], caller: Caller): Promise<UserRow[]> {
    return this.events.transaction(async (record) => {
      const existing = await this.repository.existingIds(membershipId, ids);
      for (const userId of existing) {
        await this.revoker.revokeAllOfUser(record, membershipId, userId, caller.id, REVOKE_REASON.deleted);
      }
      const rows = await this.repository.deleteByIds(membershipId, existing);
      for (const row of rows) {
        record({ membershipId, eventType: 'UserDeleted', utilizerId: caller.id, document: {}, prior: toUserResponse(row) });
      }
      return rows;
    });
  }

  /**
   * The custom fields of a user signed up without a body of its own (through a provider): what
   * POST users stores for a body that names the type and no custom fields, so the type's defaults
   * apply. A required field without a default cannot be filled: 400 ModelValidationError naming
   * it. Unique fields need no check here: they cannot have a default, so a sign-up leaves them out.
   */
  async customFieldsForSignUp(membershipId: string, userType: string | null): Promise<Record<string, unknown>> {
    const schema = await this.customFieldSchema(membershipId, userType, null);
    try {
      return validateCustomFields({}, schema).values;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const fields = (error.errors ?? []).map((problem) => problem.field).join(', ');
      throw new DomainError(error.code, `Signing up a user of the type "${userType}" needs custom fields that have no default: ${fields}`, error.errors);
    }
  }

  // ----- validation ------------------------------------------------------------------------

  /**
   * Everything about a body that needs no transaction: permission lists, the user type and the
   * custom fields against it. Looked up before the transaction because the user type comes from
   * the cache, which must not query the database while a transaction holds the connection.
   */
  private async validatedState(
    membershipId: string,
    fields: UserFieldsDto,
    customFields: Record<string, unknown>,
    current: UserRow | null,
  ): Promise<{ next: Omit<UserState, 'isActive'>; custom: ValidatedCustomFields; uniqueFields: string[] }> {
    const permissions = checkPermissionList('permissions', fields.permissions);
    const forbidden = checkPermissionList('forbidden', fields.forbidden);
    const userType = fields.user_type ?? null;
    const schema = await this.customFieldSchema(membershipId, userType, current?.userType ?? null);
    const custom = validateCustomFields(customFields, schema);
    const uniqueFields = Object.entries(schema?.properties ?? {})
      .filter(([, definition]) => definition.unique)
      .map(([name]) => name);
    return {
      uniqueFields,
      next: {
        username: fields.username,
        emailAddress: fields.email_address.toLowerCase(),
        firstname: fields.firstname ?? null,
        lastname: fields.lastname ?? null,
        role: fields.role ?? null,
        userType,
        permissions,
        forbidden,
        customFields: custom.values,
      },
      custom,
    };
  }

  /**
   * The definitions to check custom fields against. A type that no longer exists is accepted only
   * for a user that already has it (see UserTypesService: deleting a type in use is allowed);
   * its fields are then checked for safety only.
   */
  private async customFieldSchema(membershipId: string, slug: string | null, currentSlug: string | null): Promise<CustomFieldSchema | null> {
    if (slug === null) return null;
    const type = await this.userTypes.getBySlug(membershipId, slug);
    if (type) {
      return { typeSlug: slug, properties: storedDefinitions(type.properties), allowAdditionalProperties: type.allowAdditionalProperties };
    }
    if (slug === currentSlug) return { typeSlug: slug, properties: {}, allowAdditionalProperties: true };
    throw validationFailure([{ field: 'user_type', message: 'no user type with this slug exists in the membership' }]);
  }

  /**
   * Grants: the caller must hold whatever the write grants (the role's permissions when it assigns
   * one, permissions added, forbidden entries removed), also when it updates its own record.
   */
  private async requireHeldGrants(
    granter: Granter,
    membershipId: string,
    current: UserRow | null,
    next: Pick<UserState, 'role' | 'permissions' | 'forbidden'>,
  ): Promise<void> {
    const keepsGrants =
      current !== null && current.role === next.role && sameJson(current.permissions, next.permissions) && sameJson(current.forbidden, next.forbidden);
    if (keepsGrants) return;
    const before = current && (await loadAssignment(this.roles, membershipId, current));
    assertHoldsGrants(granter, grantedByAssignment(before, await loadAssignment(this.roles, membershipId, next)));
  }

  /** `role` must name a role of the membership; a role the user already has is kept even if it was deleted since. */
  private async requireRole(membershipId: string, role: string | null, currentRole: string | null): Promise<void> {
    if (role === null || role === currentRole) return;
    if (!(await this.roles.findBySlug(membershipId, role))) {
      throw validationFailure([{ field: 'role', message: 'no role with this slug exists in the membership' }]);
    }
  }

  /** The unique indexes catch the same username or e-mail twice; this also keeps one user's username from being another's e-mail. */
  private async requireFreeLogin(
    membershipId: string,
    next: Pick<UserState, 'username' | 'emailAddress'>,
    options: { exceptId?: string } = {},
  ): Promise<void> {
    const other = await this.repository.findLoginConflict(membershipId, next.username, next.emailAddress, options);
    if (other) throw new DomainError('UserAlreadyExists', 'A user with this username or e-mail address already exists');
  }

  /**
   * Unique custom fields: no other user of the same type in the membership may hold the value.
   * The type's advisory lock is held to the end of the transaction, so two concurrent writes of
   * the same value cannot both pass the check.
   */
  private async requireUniqueCustomFields(
    membershipId: string,
    userType: string | null,
    custom: ValidatedCustomFields,
    exceptId?: string,
  ): Promise<void> {
    if (userType === null || !custom.unique.length) return;
    await this.repository.lockUserType(membershipId, userType);
    const errors: FieldError[] = [];
    for (const { name, value } of custom.unique) {
      if (await this.repository.findCustomFieldHolder(membershipId, userType, name, value, exceptId)) {
        errors.push({ field: name, message: `must be unique among users of the type "${userType}"; another user has this value` });
      }
    }
    if (errors.length) throw new DomainError('UserAlreadyExists', `A user of the type "${userType}" already has this ${errors[0].field}`, errors);
  }
}
