import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Decision } from '../common/access-decision';
import type { AccessRecheck } from '../common/access-recheck';
import type { Caller } from '../common/caller';
import { DomainError } from '../common/errors';
import { isPossibleId } from '../common/ids';
import { MembershipCache } from '../memberships/membership-cache';
import { objectPermission } from '../permissions';
import { Authenticator } from './authenticator';
import { CallerPermissions } from '../roles/caller-permissions';
import {
  AUTHENTICATED_ONLY,
  type AuthenticatedRequest,
  IS_PUBLIC,
  type PermissionRequirement,
  REQUIRED_PERMISSION,
  CALLER_PROFILE,
} from '../common/access-decorators';

/** Route parameter that names the membership of every membership-scoped route. */
export const MEMBERSHIP_PARAM = 'membershipId';

/** Route parameter of the device-code routes that names a code by its user code. */
const USER_CODE_PARAM = 'userCode';

function routeParam(request: AuthenticatedRequest, name: string): string | undefined {
  const value: unknown = request.params?.[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Every route parameter of this API is an id. One that cannot name anything answers 404 here,
 * first, so it never reaches the caller's permission check, a cache or the database.
 */
function rejectImpossibleIds(request: AuthenticatedRequest): void {
  for (const [name, value] of Object.entries(request.params ?? {})) {
    // A device's user code is read off a screen and typed by a person, who may keep the space it
    // was shown with (RFC 8628 section 6.1); the device-code routes drop spaces and dashes.
    if (name === USER_CODE_PARAM && typeof value === 'string' && isPossibleId(value.replaceAll(' ', ''))) continue;
    if (isPossibleId(value)) continue;
    if (name === MEMBERSHIP_PARAM) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    throw new DomainError('NotFound', 'The requested resource does not exist');
  }
}

/** What a route declares about access, read from its decorators. */
interface AccessRule {
  isPublic: boolean;
  requirement?: PermissionRequirement;
  authenticatedOnly: boolean;
  profile: boolean;
}

/**
 * Deny by default: a route is reachable only if it is @Public(), @Authenticated() or declares a
 * permission. Membership-scoped routes only serve callers of that membership.
 */
@Injectable()
export class AccessGuard implements CanActivate, AccessRecheck {
  /** Decorators do not change at run time: each route's rule is read once (by class, then handler). */
  private readonly rules = new WeakMap<object, WeakMap<object, AccessRule>>();

  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
    private readonly permissions: CallerPermissions,
    private readonly memberships: MembershipCache,
  ) {}

  private ruleOf(context: ExecutionContext): AccessRule {
    const handler = context.getHandler();
    const controller = context.getClass();
    let ofController = this.rules.get(controller);
    if (!ofController) this.rules.set(controller, (ofController = new WeakMap()));
    let rule = ofController.get(handler);
    if (!rule) {
      const targets = [handler, controller];
      rule = {
        isPublic: this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) ?? false,
        requirement: this.reflector.getAllAndOverride<PermissionRequirement | undefined>(REQUIRED_PERMISSION, targets),
        authenticatedOnly: this.reflector.getAllAndOverride<boolean>(AUTHENTICATED_ONLY, targets) ?? false,
        profile: this.reflector.getAllAndOverride<boolean>(CALLER_PROFILE, targets) ?? false,
      };
      ofController.set(handler, rule);
    }
    return rule;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return false;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    rejectImpossibleIds(request);
    const { isPublic, requirement, authenticatedOnly, profile } = this.ruleOf(context);
    if (isPublic) return true;
    if (!requirement && !authenticatedOnly) {
      throw new DomainError('AccessDenied', 'This route declares no access rule');
    }

    const caller = await this.authenticator.authenticate(request.headers.authorization, { profile });
    request.caller = caller;
    const objectValue = requirement?.objectParam ? routeParam(request, requirement.objectParam) : undefined;
    // No promise, and no wait, when there is nothing to decide (a route of the caller's membership without a permission).
    const deciding = this.authorize(caller, routeParam(request, MEMBERSHIP_PARAM), requirement, objectValue);
    if (deciding) request.decision = await deciding;
    return true;
  }

  /** ACCESS_RECHECK: this guard's decision taken again for work that starts after it ran (src/common/access-recheck.ts). */
  async recheck(authorization: unknown, membershipId: string, requirement: PermissionRequirement): Promise<Caller> {
    const caller = await this.authenticator.authenticate(authorization);
    await this.authorize(caller, membershipId, requirement, undefined);
    return caller;
  }

  /**
   * An authenticated caller on a route of `membershipId` (if it names one) that requires
   * `requirement` (if any): the permission's decision when allowed, else the guard's error.
   */
  private authorize(caller: Caller, membershipId: string | undefined, requirement: PermissionRequirement | undefined, objectValue: string | undefined): Promise<Decision> | undefined {
    if (membershipId !== undefined && membershipId !== caller.membershipId) return this.refuseOtherMembership(membershipId);
    return requirement ? this.decide(caller, requirement, objectValue) : undefined;
  }

  private async refuseOtherMembership(membershipId: string): Promise<never> {
    if (!(await this.memberships.get(membershipId))) {
      throw new DomainError('MembershipNotFound', 'The membership does not exist');
    }
    throw new DomainError('AccessDenied', 'The token belongs to another membership');
  }

  private async decide(caller: Caller, requirement: PermissionRequirement, objectValue: string | undefined): Promise<Decision> {
    const required = objectPermission(caller.id, requirement.resource, requirement.action, objectValue);
    const decision = await this.permissions.decide(caller, required);
    if (!decision.allowed) {
      // Denied by the token's scopes alone (the holder could do it unscoped): RFC 6750's insufficient_scope.
      const challenge = decision.reason === 'scope' ? 'insufficient_scope' : undefined;
      throw new DomainError('AccessDenied', `Permission ${requirement.resource}.${requirement.action} is required`, undefined, challenge);
    }
    return decision;
  }
}
