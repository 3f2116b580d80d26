import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { DomainError, validationError } from '../common/errors';
import { newId, slugify } from '../common/ids';
import { MembershipResourceService } from '../common/crud/membership-resource.service';
import type { RoleRow } from '../database/schema';
import type { EventType } from '../events/event-types';
import { RequestTransaction } from '../common/request-transaction';
import { EventRecorder } from '../events/event-recorder';
import { validatePermissionList } from './permission-list';
import { assertHoldsGrants, grantedBy, type GrantedLists, segmentsMeet, segmentsOverlap } from '../permissions';
import { parseStored, RoleCache } from './role-cache';
import type { RoleBodyDto } from './role.dto';
import { ADMIN_ROLE_SLUG, toRoleResponse, type RoleResponse } from './role.mapper';
import { RoleRepository, type RoleContent } from './role.repository';

/**
 * Roles of a membership. Rules beyond the contract:
 * - the slug is set on create (from the name when omitted) and never changes: users and
 *   applications name their role by slug, so renaming it would silently strip them of it;
 * - the `admin` role is managed by the service: it cannot be created, changed or deleted, so no
 *   one can lock a membership out of its own administration;
 * - deleting a role leaves the users and applications that name it without role permissions
 *   (a later role with the same slug applies to them again).
 * Every change invalidates this instance's role cache once it commits; other instances drop the
 * membership's cached roles within about a second (its RoleCreated/Updated/Deleted event, through
 * event-log/cached-settings.ts), or at worst when their copy expires (ROLE_CACHE_TTL_MS). Changes run in the request transaction (EventRecordingInterceptor
 * on the controller); their events commit with them.
 */
@Injectable()
export class RolesService extends MembershipResourceService<RoleRow, RoleBodyDto, RoleResponse, EventType> {
  constructor(
    private readonly roles: RoleRepository,
    private readonly cache: RoleCache,
    recorder: EventRecorder,
    private readonly permissions: CallerPermissions,
    private readonly transaction: RequestTransaction,
  ) {
    super({ resource: 'roles', entity: 'Role', noun: 'role', toResponse: toRoleResponse }, roles, recorder, permissions);
  }

  async create(caller: Caller, membershipId: string, input: RoleBodyDto): Promise<RoleResponse> {
    return this.changes.transaction(async (record) => {
      const slug = input.slug ?? slugify(input.name);
      if (slug === ADMIN_ROLE_SLUG) throw new DomainError('ReservedRole', `The slug "${ADMIN_ROLE_SLUG}" is reserved for the service's admin role`);
      const content = contentOf(input);
      assertHoldsGrants(await this.permissions.granterOf(caller), grantedBy(null, listsOf(content)));
      const row = await this.roles.insert(membershipId, { id: newId(), slug, ...content, createdBy: caller.id });
      record(this.createdEvent(membershipId, caller.id, row));
      // A miss for this slug may be cached (users can name a role before it exists).
      this.transaction.afterCommit(() => this.cache.invalidate(membershipId, slug));
      return toRoleResponse(row);
    });
  }

  async replace(caller: Caller, membershipId: string, id: string, input: RoleBodyDto): Promise<RoleResponse> {
    return this.changes.transaction(async (record) => {
      const content = contentOf(input);
      const granter = await this.permissions.granterOf(caller);
      const current = await this.lockCurrent(membershipId, id);
      if (current.slug === ADMIN_ROLE_SLUG) {
        throw new DomainError('ReservedRole', 'The admin role is managed by the service and cannot be changed');
      }
      if (input.slug !== undefined && input.slug !== current.slug) {
        throw validationError('slug', 'cannot be changed: users and applications name their role by its slug');
      }
      this.assertChanges(current, content);
      assertHoldsGrants(granter, grantedBy(listsOf(current), listsOf(content)));
      const row = await this.roles.update(membershipId, id, content, caller.id);
      record(this.updatedEvent(membershipId, caller.id, row, current));
      this.transaction.afterCommit(() => this.cache.invalidate(membershipId, row.slug));
      return toRoleResponse(row);
    });
  }

  /**
   * All or nothing: the admin role among the ids refuses the whole request, and so does a role
   * whose going would let its users or applications do what the caller may not. They lose its
   * forbidden entries with it, and what those entries denied of their own permissions is then
   * granted to them (Grants), as removing the entries by PUT would be. Only that part counts, so
   * a role nobody holds, or one whose holders have no own permissions it denied, goes freely
   * (and an admin can delete a role forbidding `*`, which no caller holds).
   */
  protected override async beforeDelete(membershipId: string, ids: readonly string[], caller: Caller): Promise<void> {
    const existing = await this.roles.findByIds(membershipId, ids);
    if (existing.some((row) => row.slug === ADMIN_ROLE_SLUG)) {
      throw new DomainError('SystemRolesCannotBeDeleted', 'The admin role cannot be deleted');
    }
    const guarding = existing.filter((row) => row.forbidden.length > 0);
    const holders = await this.roles.ownPermissionsOfHolders(membershipId, guarding.map((row) => row.slug));
    const released = guarding.flatMap((row) => {
      const forbidden = parseStored(row.forbidden);
      const own = holders.filter((holder) => holder.role === row.slug).flatMap((holder) => parseStored(holder.permissions));
      return forbidden.flatMap((entry) => own.filter((permission) => segmentsOverlap(entry, permission)).map((permission) => segmentsMeet(entry, permission)));
    });
    if (released.length) assertHoldsGrants(await this.permissions.granterOf(caller), released);
  }

  protected override afterDelete(membershipId: string, deleted: readonly RoleRow[]): void {
    this.transaction.afterCommit(() => {
      for (const row of deleted) this.cache.invalidate(membershipId, row.slug);
    });
  }
}

function listsOf(role: { permissions: readonly string[]; forbidden: readonly string[] }): GrantedLists {
  return { permissions: parseStored(role.permissions), forbidden: parseStored(role.forbidden) };
}

function contentOf(input: RoleBodyDto): RoleContent {
  return {
    name: input.name,
    description: input.description ?? null,
    permissions: validatePermissionList('permissions', input.permissions),
    forbidden: validatePermissionList('forbidden', input.forbidden),
  };
}
