/**
 * Portcullis client library (`@portcullis/client`): protects a third-party API with the identity
 * service. This entry loads nothing but Node's own modules, so an Express API needs no NestJS;
 * the NestJS guard and decorators are `@portcullis/client/nest`. See the package's README.md.
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
export { type PortcullisRequest, principalOf, toProtectedRequest } from './request';
export { DEFAULT_TIMEOUT_MS, type PortcullisSettings, type ResolvedSettings } from './settings';
