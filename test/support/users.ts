/**
 * Moved to ./api, the one API helper of the e2e tests. This file only re-exports, so that specs
 * written on branches in flight still compile; import from './api' and delete this file once none imports it.
 */
export {
  DEFAULT_PASSWORD,
  usersPath,
  userTypesPath,
  userBody,
  createUser,
  createSignedInUser,
  createUserType,
  putBodyOf,
  eventsAbout,
  type UserDoc,
  type UserTypeDoc,
} from './api';
