/**
 * Portcullis client library (`portcullis/client`): protects a third-party API with the identity
 * service. See README.md beside this file.
 */
export {
  type AuthorizationAllowed,
  type AuthorizationOutcome,
  type EndpointMode,
  type EndpointRule,
  MAX_AUTHORIZATION_LENGTH,
  PortcullisClient,
  type PortcullisIdentity,
  type PortcullisPrincipal,
  type ProtectedRequest,
  type TokenKind,
} from './client';
export {
  type AuthorizationDenied,
  type DenyStatus,
  PortcullisConfigError,
  type PortcullisErrorBody,
  PORTCULLIS_REALM,
} from './errors';
export {
  buildExpression,
  CompiledPermission,
  compilePermission,
  type ExpressionContext,
  type ExpressionResult,
  type PermissionTemplate,
  type PlaceholderSource,
  rejectValue,
  resourceFromRouteTemplate,
  type SegmentName,
} from './expression';
export {
  type ExpressAuthorizedRule,
  portcullis,
  type PortcullisMiddleware,
  type PortcullisMiddlewareOptions,
} from './express';
export {
  Authorized,
  type EndpointMetadata,
  Permission,
  PORTCULLIS_METADATA,
  PortcullisCaller,
  type PortcullisDecorator,
  PortcullisDeniedException,
  PortcullisGuard,
  PortcullisModule,
  type PortcullisModuleOptions,
  resolveEndpointRule,
  SelfAuthorized,
  Unauthorized,
} from './nest';
export { type PortcullisRequest, principalOf, toProtectedRequest } from './request';
export { DEFAULT_TIMEOUT_MS, type PortcullisSettings, type ResolvedSettings } from './settings';
