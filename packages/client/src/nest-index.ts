/**
 * `@portcullis/client/nest`: the NestJS guard, module and decorators, with everything of the main
 * entry, so a NestJS API imports from one place. A separate entry because loading it loads
 * `@nestjs/common` and `@nestjs/core`, optional peer dependencies an Express API does not have.
 */
export * from './index';
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
