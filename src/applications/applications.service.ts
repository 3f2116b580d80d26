import { Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CallerPermissions } from '../roles/caller-permissions';
import { validationError } from '../common/errors';
import { newId, slugify } from '../common/ids';
import { MembershipResourceService } from '../common/crud/membership-resource.service';
import type { EventType } from '../events/event-types';
import type { ApplicationRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { validatePermissionList } from '../roles/permission-list';
import { assertHoldsGrants, grantedByAssignment } from '../permissions';
import { assertMayTakeOver, loadAssignment } from '../roles/assignment';
import { RoleRepository } from '../roles/role.repository';
import { newApplicationSecret } from './application-secret';
import type { ApplicationBodyDto } from './application.dto';
import { toApplicationResponse, type ApplicationResponse } from './application.mapper';
import { toApplicationOidc } from './application-oidc';
import { ApplicationRepository, type ApplicationContent } from './application.repository';

/** The one answer that carries the secret: create and rotation. */
export type ApplicationWithSecret = ApplicationResponse & { secret: string };

/**
 * Applications of a membership. The secret is shown once (create, rotation) and stored only as a
 * digest; events and other answers never carry either. A role must exist in the membership when
 * it is assigned (400 ModelValidationError on `role`: it is the request body that is wrong).
 */
@Injectable()
export class ApplicationsService extends MembershipResourceService<ApplicationRow, ApplicationBodyDto, ApplicationResponse, EventType, ApplicationWithSecret> {
  constructor(
    private readonly applications: ApplicationRepository,
    private readonly roles: RoleRepository,
    recorder: EventRecorder,
    private readonly permissions: CallerPermissions,
  ) {
    super({ resource: 'applications', entity: 'Application', noun: 'application', toResponse: toApplicationResponse }, applications, recorder, permissions);
  }

  async create(caller: Caller, membershipId: string, input: ApplicationBodyDto): Promise<ApplicationWithSecret> {
    return this.changes.transaction(async (record) => {
      const lists = listsOf(input);
      const { secret, digest } = newApplicationSecret();
      const granter = await this.permissions.granterOf(caller);
      await this.assertRoleExists(membershipId, input.role);
      const granted = await loadAssignment(this.roles, membershipId, { role: input.role ?? null, ...lists });
      assertHoldsGrants(granter, grantedByAssignment(null, granted));
      const row = await this.applications.insert(membershipId, {
        id: newId(),
        name: input.name,
        slug: input.slug ?? slugify(input.name),
        description: input.description ?? null,
        role: input.role ?? null,
        ...lists,
        isActive: input.is_active ?? true,
        oidc: toApplicationOidc(input.oidc),
        secretDigest: digest,
        createdBy: caller.id,
      });
      record(this.createdEvent(membershipId, caller.id, row));
      return { ...toApplicationResponse(row), secret };
    });
  }

  /** Replaces the mutable fields; an omitted slug is kept, other omitted fields return to their defaults. */
  async replace(caller: Caller, membershipId: string, id: string, input: ApplicationBodyDto): Promise<ApplicationResponse> {
    return this.changes.transaction(async (record) => {
      const lists = listsOf(input);
      const granter = await this.permissions.granterOf(caller);
      const current = await this.lockCurrent(membershipId, id);
      const next: ApplicationContent = {
        name: input.name,
        slug: input.slug ?? current.slug,
        description: input.description ?? null,
        role: input.role ?? null,
        ...lists,
        isActive: input.is_active ?? true,
        oidc: toApplicationOidc(input.oidc),
      };
      this.assertChanges(current, next);
      if (next.role !== current.role) await this.assertRoleExists(membershipId, next.role);
      const before = await loadAssignment(this.roles, membershipId, current);
      assertHoldsGrants(granter, grantedByAssignment(before, await loadAssignment(this.roles, membershipId, next)));
      const row = await this.applications.update(membershipId, id, next, caller.id);
      record(this.updatedEvent(membershipId, caller.id, row, current));
      return toApplicationResponse(row);
    });
  }

  /** A new secret, shown once; the old one fails from the commit on (Basic checks read the digest every time). */
  async rotateSecret(caller: Caller, membershipId: string, id: string): Promise<ApplicationWithSecret> {
    return this.changes.transaction(async (record) => {
      const { secret, digest } = newApplicationSecret();
      const current = await this.lockCurrent(membershipId, id);
      // The caller gets the new secret, and with it all the application holds.
      await assertMayTakeOver(await this.permissions.granterOf(caller), this.roles, membershipId, current);
      const row = await this.applications.replaceSecretDigest(membershipId, id, digest, caller.id);
      record(this.updatedEvent(membershipId, caller.id, row, current));
      for (const token of await this.applications.revokeClientTokens(membershipId, id, caller.id, 'secret_rotated')) {
        record({
          membershipId,
          eventType: 'TokenRevoked',
          utilizerId: caller.id,
          document: {
            grant: 'client_credentials',
            client_id: token.clientId,
            token_id: token.id,
            token_type: 'Bearer',
            expire_time: token.expiresAt.toISOString(),
            reason: 'secret_rotated',
          },
        });
      }
      return { ...toApplicationResponse(row), secret };
    });
  }

  private async assertRoleExists(membershipId: string, role: string | null | undefined): Promise<void> {
    if (role === null || role === undefined) return;
    if (!(await this.roles.findBySlug(membershipId, role))) {
      throw validationError('role', `no role with the slug ${JSON.stringify(role.slice(0, 64))} exists in this membership`);
    }
  }
}

function listsOf(input: ApplicationBodyDto): Pick<ApplicationContent, 'permissions' | 'forbidden'> {
  return {
    permissions: validatePermissionList('permissions', input.permissions),
    forbidden: validatePermissionList('forbidden', input.forbidden),
  };
}
