import { validationError } from '../common/errors';
import { Injectable } from '@nestjs/common';
import type { RecordEvent } from '../events/event-recorder';
import { newId, newSecret, slugify } from '../common/ids';
import { PasswordHasher } from '../users/password-hasher';
import { toUserResponse, type UserResponse } from '../users/user.mapper';
import { UserRepository } from '../users/user.repository';
import { RoleRepository } from '../roles/role.repository';
import { ADMIN_ROLE_SLUG, adminPermissions, toRoleResponse, type RoleResponse } from '../roles/role.mapper';
import { ApplicationRepository } from '../applications/application.repository';
import { newApplicationSecret } from '../applications/application-secret';
import { toApplicationResponse, type ApplicationResponse } from '../applications/application.mapper';
import { MembershipRepository } from '../memberships/membership.repository';
import { toMembershipResponse, type MembershipResponse } from '../memberships/membership.mapper';
import { MEMBERSHIP_DEFAULTS, type MembershipProvisionInput } from '../memberships/membership.dto';

export interface ProvisionedMembership {
  membership: MembershipResponse;
  /** Absent when POST /memberships was sent without a first user (setup always has one). */
  user?: UserResponse;
  role: RoleResponse;
  application?: ApplicationResponse & { secret: string };
}

/** Creates a membership with its admin role, optional first admin user and optional application. */
@Injectable()
export class MembershipProvisioner {
  constructor(
    private readonly memberships: MembershipRepository,
    private readonly roles: RoleRepository,
    private readonly users: UserRepository,
    private readonly applications: ApplicationRepository,
    private readonly hasher: PasswordHasher,
  ) {}

  /** Hash outside any transaction: argon2 takes tens of milliseconds and must not hold a connection. */
  async hashPassword(input: MembershipProvisionInput): Promise<string | undefined> {
    return input.user ? this.hasher.hash(input.user.password) : undefined;
  }

  /** Runs in the caller's transaction (EventRecorder.transaction); `record` records its events there. */
  async provision(
    record: RecordEvent,
    input: MembershipProvisionInput,
    passwordHash: string | undefined,
    options: { isSystem: boolean; utilizerId: string },
  ): Promise<ProvisionedMembership> {
    // A new membership has no token code policy yet, so it can name none.
    if (input.membership.code_policy) throw validationError('membership.code_policy', 'names no token code policy of this membership');
    const membershipId = newId();
    const createdBy = options.utilizerId;
    const membership = await this.memberships.insert({
      id: membershipId,
      name: input.membership.name,
      slug: input.membership.slug ?? slugify(input.membership.name),
      secretKey: newSecret(32),
      expiresIn: input.membership.expires_in ?? MEMBERSHIP_DEFAULTS.expiresIn,
      refreshTokenExpiresIn: input.membership.refresh_token_expires_in ?? MEMBERSHIP_DEFAULTS.refreshTokenExpiresIn,
      scopedTokenExpiresIn: input.membership.scoped_token_expires_in ?? MEMBERSHIP_DEFAULTS.scopedTokenExpiresIn,
      userActivation: input.membership.user_activation ?? MEMBERSHIP_DEFAULTS.userActivation,
      mfaPolicy: input.membership.mfa_policy ?? MEMBERSHIP_DEFAULTS.mfaPolicy,
      hashAlgorithm: input.membership.hash_algorithm ?? MEMBERSHIP_DEFAULTS.hashAlgorithm,
      isSystem: options.isSystem,
      createdBy,
    });
    const role = await this.roles.insert(
      membershipId,
      {
        id: newId(),
        name: 'Admin',
        slug: ADMIN_ROLE_SLUG,
        description: 'Every action on every resource of the membership',
        permissions: adminPermissions(membershipId, options.isSystem),
        forbidden: [],
        createdBy,
      },
    );
    const result: ProvisionedMembership = {
      membership: toMembershipResponse(membership, { includeSecretKey: true }),
      role: toRoleResponse(role),
    };
    record({ membershipId, eventType: 'RoleCreated', utilizerId: createdBy, document: result.role });
    if (input.user) {
      if (passwordHash === undefined) throw new Error('provision: a first user needs its password hash (hashPassword)');
      // The first admin is active even in a `passive` membership: someone must be able to sign in.
      const user = await this.users.insert({
        id: newId(),
        membershipId,
        username: input.user.username,
        emailAddress: input.user.email_address.toLowerCase(),
        passwordHash,
        firstname: input.user.firstname ?? null,
        lastname: input.user.lastname ?? null,
        role: ADMIN_ROLE_SLUG,
        isActive: true,
        createdBy,
      });
      result.user = toUserResponse(user);
      record({ membershipId, eventType: 'UserCreated', utilizerId: createdBy, document: result.user });
    }
    if (input.application) {
      const { secret, digest } = newApplicationSecret();
      const application = await this.applications.insert(
        membershipId,
        {
          id: newId(),
          name: input.application.name,
          slug: slugify(input.application.name),
          role: ADMIN_ROLE_SLUG,
          secretDigest: digest,
          createdBy,
        },
      );
      const response = toApplicationResponse(application);
      record({ membershipId, eventType: 'ApplicationCreated', utilizerId: createdBy, document: response });
      result.application = { ...response, secret };
    }
    return result;
  }
}
