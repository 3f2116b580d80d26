import { applyDecorators, createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Request } from 'express';
import ipaddr from 'ipaddr.js';
import type { Caller } from './caller';
import type { Decision } from './access-decision';

export const IS_PUBLIC = 'portcullis:public';
export const AUTHENTICATED_ONLY = 'portcullis:authenticated';
export const REQUIRED_PERMISSION = 'portcullis:permission';
export const CALLER_PROFILE = 'portcullis:caller-profile';

/** No token needed. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

/**
 * Any valid Bearer or Basic token; the handler itself decides what the caller may see. With
 * `profile`, the caller carries its own document (`caller.profile`), which for a user costs a wider query.
 */
export const Authenticated = (options: { profile?: boolean } = {}): MethodDecorator & ClassDecorator =>
  options.profile ? applyDecorators(SetMetadata(AUTHENTICATED_ONLY, true), SetMetadata(CALLER_PROFILE, true)) : SetMetadata(AUTHENTICATED_ONLY, true);

export interface PermissionRequirement {
  resource: string;
  action: string;
  /** Route parameter whose value is the expression's object; absent means `*`. */
  objectParam?: string;
}

/**
 * `@RequirePermission('webhooks.read', { object: 'id' })`: the caller needs
 * `<caller id>.webhooks.read.<:id>` (or `.*` without `object`).
 */
export function RequirePermission(permission: string, options: { object?: string } = {}): MethodDecorator & ClassDecorator {
  return SetMetadata(REQUIRED_PERMISSION, permissionRequirement(permission, options));
}

/** `"resource.action"` as the guard reads it; anything else throws (a typo fails at start-up). */
export function permissionRequirement(permission: string, options: { object?: string } = {}): PermissionRequirement {
  const [resource, action] = permission.split('.');
  if (!resource || !action) throw new Error(`RequirePermission needs "resource.action", got "${permission}"`);
  return { resource, action, objectParam: options.object };
}

export interface AuthenticatedRequest extends Request {
  caller?: Caller;
  decision?: Decision;
}

/** The authenticated caller of this request (set by the access guard). */
export const CurrentCaller = createParamDecorator((_data: unknown, context: ExecutionContext): Caller => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.caller) throw new Error('CurrentCaller used on a route without authentication');
  return request.caller;
});

/** The permission decision that let this request through (e.g. `own_record`). */
export const CurrentDecision = createParamDecorator((_data: unknown, context: ExecutionContext): Decision | undefined => {
  return context.switchToHttp().getRequest<AuthenticatedRequest>().decision;
});

/**
 * Who makes the request and from where, for a service that acts for the caller: the caller, the
 * decision that let it through (on routes with RequirePermission) and the client's address.
 */
export interface RequestActor {
  caller: Caller;
  decision?: Decision;
  address: string;
}

/** The request's RequestActor, as a handler parameter. */
export const CurrentActor = createParamDecorator((_data: unknown, context: ExecutionContext): RequestActor => {
  const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
  if (!request.caller) throw new Error('CurrentActor used on a route without authentication');
  const actor: RequestActor = { caller: request.caller, address: clientAddressOf(request) };
  if (request.decision) actor.decision = request.decision;
  return actor;
});

/**
 * The client's address for the sign-in defenses: Express's `request.ip`, which is the socket's
 * address, or X-Forwarded-For's as far as TRUST_PROXY allows (never X-IpAddress, which any caller
 * sets). IPv4-mapped IPv6 forms count as their IPv4 address, so one client has one count.
 */
export function clientAddressOf(request: Request): string {
  const raw = request.ip ?? request.socket?.remoteAddress ?? '';
  return ipaddr.isValid(raw) ? ipaddr.process(raw).toString() : raw.slice(0, MAX_ADDRESS_LENGTH) || 'unknown';
}

/** The longest textual IPv6 address (with an embedded IPv4 part) is 45 characters. */
const MAX_ADDRESS_LENGTH = 45;

/** `clientAddressOf` the request, as a handler parameter. */
export const ClientAddress = createParamDecorator((_data: unknown, context: ExecutionContext): string =>
  clientAddressOf(context.switchToHttp().getRequest<Request>()),
);
