import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { DomainError } from '../common/errors';
import { MembershipCache } from '../memberships/membership-cache';
import { escapePermissionSegment, PermissionExpression } from '../permissions';
import { Authenticator } from './authenticator';
import { CallerPermissions } from './caller-permissions';
import {
  AUTHENTICATED_ONLY,
  type AuthenticatedRequest,
  IS_PUBLIC,
  type PermissionRequirement,
  REQUIRED_PERMISSION,
} from './decorators';

/** Route parameter that names the membership of every membership-scoped route. */
export const MEMBERSHIP_PARAM = 'membershipId';

function routeParam(request: AuthenticatedRequest, name: string): string | undefined {
  const value: unknown = request.params?.[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Deny by default: a route is reachable only if it is @Public(), @Authenticated() or declares a
 * permission. Membership-scoped routes only serve callers of that membership.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
    private readonly permissions: CallerPermissions,
    private readonly memberships: MembershipCache,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return false;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const requirement = this.reflector.getAllAndOverride<PermissionRequirement | undefined>(REQUIRED_PERMISSION, targets);
    const authenticatedOnly = this.reflector.getAllAndOverride<boolean>(AUTHENTICATED_ONLY, targets);
    if (!requirement && !authenticatedOnly) {
      throw new DomainError('AccessDenied', 'This route declares no access rule');
    }

    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const caller = await this.authenticator.authenticate(request.headers.authorization);
    request.caller = caller;

    const membershipId = routeParam(request, MEMBERSHIP_PARAM);
    if (membershipId !== undefined && membershipId !== caller.membershipId) {
      if (!(await this.memberships.get(membershipId))) {
        throw new DomainError('MembershipNotFound', 'The membership does not exist');
      }
      throw new DomainError('AccessDenied', 'The token belongs to another membership');
    }

    if (requirement) {
      const objectValue = requirement.objectParam ? routeParam(request, requirement.objectParam) : undefined;
      const required = PermissionExpression.of({
        subject: escapePermissionSegment(caller.id),
        resource: requirement.resource,
        action: requirement.action,
        object: objectValue ? escapePermissionSegment(objectValue) : '*',
      });
      const decision = await this.permissions.decide(caller, required);
      request.decision = decision;
      if (!decision.allowed) {
        throw new DomainError('AccessDenied', `Permission ${requirement.resource}.${requirement.action} is required`);
      }
    }
    return true;
  }
}
