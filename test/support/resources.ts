/**
 * Factories for memberships, roles and applications, over the real HTTP API. Any caller with
 * `auth` (a `SignedIn`, or `{auth: 'Basic …', membershipId}` for an application) can be passed.
 *
 *   const t = await startTestApp();
 *   const { admin: systemAdmin } = await setupInstallation(t);
 *   const tenant = await createMembership(t, systemAdmin);              // a membership + its signed-in admin
 *   const role = await createRole(t, tenant.admin, { permissions: ['users.read'] });
 *   const app = await createApplication(t, tenant.admin, { role: role.slug }); // app.basic = 'Basic id:secret'
 *   const reader = await createApplicationWithPermissions(t, tenant.admin, ['users.read']);
 *
 * Each helper throws (failing the test) when the API does not answer with the expected status.
 */
import type { Response } from 'supertest';
import type { TestApp } from './app';
import { signIn, unique, type MembershipOptions, type SignedIn } from './factories';

/** A JSON object the API answered: tests read its fields freely, as a client would. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped JSON from the wire
export type ApiObject = Record<string, any>;

/** Anything that can call the API for a membership: a signed-in user or an application. */
export interface ApiCaller {
  /** `Bearer <access token>` or `Basic <id>:<secret>` */
  auth: string;
  membershipId: string;
}

export interface CreateMembershipOptions extends MembershipOptions {
  /** Default: a unique name. */
  name?: string;
  /** Default: derived from the name. */
  slug?: string;
  user_activation?: 'active' | 'passive';
  /** Also create an application (role `admin`) and return its Basic token. Default false. */
  application?: boolean;
}

export interface CreatedApplication {
  /** The application as the API answered it, including `secret` (shown once). */
  application: ApiObject;
  id: string;
  secret: string;
  /** `Basic <id>:<secret>` */
  basic: string;
  membershipId: string;
  /** Same as `basic`, so a CreatedApplication can be passed wherever an ApiCaller is expected. */
  auth: string;
}

export interface CreatedMembership {
  /** The membership as POST /memberships answered it (with `secret_key` for a system admin caller). */
  membership: ApiObject;
  membershipId: string;
  /** The first admin user (role `admin`), signed in; `userId` is set. */
  admin: SignedIn;
  /** The admin role created with the membership. */
  role: ApiObject;
  /** Present when `options.application` was true. */
  application?: CreatedApplication;
  /** The whole 201 body. */
  response: ApiObject;
}

function expectStatus(res: Response, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
}

/**
 * POST /memberships as `systemAdmin` (a caller of the system membership, e.g. `setupInstallation(t).admin`)
 * with a first admin user, which is then signed in.
 */
export async function createMembership(t: TestApp, systemAdmin: ApiCaller, options: CreateMembershipOptions = {}): Promise<CreatedMembership> {
  const { name, slug, application, ...settings } = options;
  const username = unique('owner');
  const password = 'tenant admin password';
  const res = await t
    .http()
    .post('/memberships')
    .set('Authorization', systemAdmin.auth)
    .send({
      membership: { name: name ?? unique('Tenant'), ...(slug ? { slug } : {}), ...settings },
      user: { username, email_address: `${username}@example.com`, password, firstname: 'Tess', lastname: 'Tenant' },
      ...(application ? { application: { name: unique('tenant-app') } } : {}),
    });
  expectStatus(res, 201, 'createMembership');
  const membershipId = res.body.membership._id as string;
  const admin = await signIn(t, membershipId, username, password);
  admin.userId = res.body.user._id;
  const created: CreatedMembership = { membership: res.body.membership, membershipId, admin, role: res.body.role, response: res.body };
  if (res.body.application) {
    const app = res.body.application as ApiObject;
    const basic = `Basic ${app._id}:${app.secret}`;
    created.application = { application: app, id: app._id, secret: app.secret, basic, auth: basic, membershipId };
  }
  return created;
}

export interface RoleBody {
  name?: string;
  slug?: string;
  description?: string | null;
  permissions?: string[];
  forbidden?: string[];
}

/** POST /memberships/{caller's membership}/roles; defaults: a unique name, no permissions. Answers the role. */
export async function createRole(t: TestApp, caller: ApiCaller, body: RoleBody = {}): Promise<ApiObject> {
  const res = await t
    .http()
    .post(`/memberships/${caller.membershipId}/roles`)
    .set('Authorization', caller.auth)
    .send({ name: unique('Role'), permissions: [], ...body });
  expectStatus(res, 201, 'createRole');
  return res.body;
}

export interface ApplicationBody {
  name?: string;
  slug?: string;
  description?: string | null;
  role?: string | null;
  permissions?: string[];
  forbidden?: string[];
  is_active?: boolean;
}

/** POST /memberships/{caller's membership}/applications; defaults: a unique name, no role. */
export async function createApplication(t: TestApp, caller: ApiCaller, body: ApplicationBody = {}): Promise<CreatedApplication> {
  const res = await t
    .http()
    .post(`/memberships/${caller.membershipId}/applications`)
    .set('Authorization', caller.auth)
    .send({ name: unique('app'), ...body });
  expectStatus(res, 201, 'createApplication');
  const basic = `Basic ${res.body._id}:${res.body.secret}`;
  return { application: res.body, id: res.body._id, secret: res.body.secret, basic, auth: basic, membershipId: caller.membershipId };
}

/**
 * A role with exactly these permissions (and forbidden entries) plus an application holding that
 * role: a caller with a chosen set of permissions, without the users API. Answers the application
 * (use `.auth`) with `role` set to the created role.
 */
export async function createApplicationWithPermissions(
  t: TestApp,
  admin: ApiCaller,
  permissions: string[],
  forbidden: string[] = [],
): Promise<CreatedApplication & { role: ApiObject }> {
  const role = await createRole(t, admin, { permissions, forbidden });
  const app = await createApplication(t, admin, { role: role.slug });
  return { ...app, role };
}

/** Asserts the contract's error body: status, code, and a message. */
export function expectErrorBody(res: Response, status: number, errorCode: string): void {
  if (res.status !== status || res.body?.errorCode !== errorCode || res.body?.statusCode !== status || typeof res.body?.message !== 'string') {
    throw new Error(`expected ${status} ${errorCode}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
}

/** A filter nested `levels` deep through `$and` (the top-level filter is level 1). */
export function nestedFilter(levels: number, leaf: Record<string, unknown>): Record<string, unknown> {
  let filter: Record<string, unknown> = leaf;
  for (let i = 1; i < levels; i++) filter = { $and: [filter] };
  return filter;
}

/**
 * `_query` bodies that must all answer 400 InvalidQuery on any resource: unsupported operators,
 * SQL in field names, too deep, too many `$in` values, a hidden field in where/select.
 * `field` is a string field of the resource; `hiddenField` one its schema hides.
 */
export function hostileQueries(field: string, hiddenField: string): { name: string; body: Record<string, unknown> }[] {
  return [
    { name: '$where', body: { where: { $where: 'sleep(1)' } } },
    { name: '$regex', body: { where: { [field]: { $regex: '.*' } } } },
    { name: '$expr', body: { where: { $expr: { $eq: [1, 1] } } } },
    { name: 'SQL in a field name', body: { where: { [`${field}" = '' or 1=1; drop table users; --`]: 'x' } } },
    { name: 'SQL in a dotted field name', body: { where: { [`${field}.x';drop table users--`]: 'x' } } },
    { name: 'nesting 9 levels deep', body: { where: nestedFilter(9, { [field]: 'x' }) } },
    { name: '10,000 $in values', body: { where: { [field]: { $in: Array.from({ length: 10_000 }, (_, i) => `v${i}`) } } } },
    { name: 'filter on a hidden field', body: { where: { [hiddenField]: 'x' } } },
    { name: 'exists on a hidden field', body: { where: { [hiddenField]: { $exists: true } } } },
    { name: 'select of a hidden field', body: { select: { [hiddenField]: 1 } } },
    { name: 'where that is not an object', body: { where: ['x'] } },
    { name: 'operator mixed with plain keys', body: { where: { [field]: { $eq: 'x', plain: 1 } } } },
    { name: 'a body key besides where and select', body: { filter: { [field]: 'x' } } },
  ];
}
