/**
 * Moved to ./api, the one API helper of the e2e tests. This file only re-exports, so that specs
 * written on branches in flight still compile; import from './api' and delete this file once none imports it.
 */
export {
  createMembership,
  createRole,
  createApplication,
  createApplicationWithPermissions,
  expectErrorBody,
  nestedFilter,
  hostileQueries,
  type ApiObject,
  type ApiCaller,
  type CreateMembershipOptions,
  type CreatedApplication,
  type CreatedMembership,
  type RoleBody,
  type ApplicationBody,
} from './api';
