/**
 * The one API helper of the e2e tests: boot the service as its setup admin, create what a test
 * needs (memberships, users, roles, applications, user types, webhooks) and call the API as a
 * caller with Bearer or Basic, all over the real HTTP API of a real app on a real database.
 *
 *   const suite = useInstallation();   // beforeAll boots the app and runs /setup; afterAll closes it
 *   const { t, inst } = suite;         // inside a test or hook only: they exist once beforeAll has run
 *
 *   const tenant = await createMembership(t, inst.admin);               // a membership + its signed-in admin
 *   const role = await createRole(t, tenant.admin, { permissions: ['users.read'] });
 *   const app = await createApplication(t, tenant.admin, { role: role.slug }); // app.basic = 'Basic id:secret'
 *   const { user, session } = await createSignedInUser(t, tenant.admin);
 *   const res = await as(t, session).get(`/memberships/${tenant.membershipId}/users`);
 *
 * Every factory throws (failing the test) when the API does not answer with the expected status.
 */
import { randomBytes } from 'node:crypto';
import { and, asc, eq, sql } from 'drizzle-orm';
import type { Response, Test } from 'supertest';
import { DATABASE, type Database } from '../../src/database/database';
import { events, type EventRow } from '../../src/database/schema';
import { PasswordHasher } from '../../src/users/password-hasher';
import { startTestApp, TEST_SETUP_TOKEN, type TestApp, type TestAppOptions } from './app';
import { useStarted } from './use-started';

/** A JSON object the API answered: tests read its fields freely, as a client would. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped JSON from the wire; tests assert on it
export type ApiObject = Record<string, any>;

// ---------------------------------------------------------------------------------------------
// Callers and calls
// ---------------------------------------------------------------------------------------------

/** Anything that can call the API for a membership: a signed-in user or an application. */
export interface ApiCaller {
  /** `Bearer <access token>` or `Basic <id>:<secret>` */
  auth: string;
  membershipId: string;
}

/** The Authorization value of a caller, or an Authorization value as is. */
export type Credentials = ApiCaller | string;

export const bearer = (token: string): string => `Bearer ${token}`;
export const basic = (id: string, secret: string): string => `Basic ${id}:${secret}`;
const authorizationOf = (who: Credentials): string => (typeof who === 'string' ? who : who.auth);

/** Requests sent with one caller's Authorization (or another's, passed last). Each answers a supertest `Test`. */
export interface Calls {
  get(path: string, who?: Credentials): Test;
  post(path: string, body?: object, who?: Credentials): Test;
  put(path: string, body?: object, who?: Credentials): Test;
  patch(path: string, body?: object, who?: Credentials): Test;
  del(path: string, body?: object, who?: Credentials): Test;
}

/**
 * Calls to the app as `caller`. Both may be given as functions, read at call time, for suites
 * that define their calls before `beforeAll` has booted the app:
 *
 *   const { get, post } = as(() => t, () => tenant.admin);
 *   await post(base, body);                     // as the tenant admin
 *   await get(`${base}/${id}`, other.admin);    // as someone else
 */
export function as(app: TestApp | (() => TestApp), caller: Credentials | (() => Credentials)): Calls {
  const http = () => (typeof app === 'function' ? app() : app).http();
  const auth = (who?: Credentials) => authorizationOf(who ?? (typeof caller === 'function' ? caller() : caller));
  return {
    get: (path, who) => http().get(path).set('Authorization', auth(who)),
    post: (path, body, who) => http().post(path).set('Authorization', auth(who)).send(body),
    put: (path, body, who) => http().put(path).set('Authorization', auth(who)).send(body),
    patch: (path, body, who) => http().patch(path).set('Authorization', auth(who)).send(body),
    del: (path, body, who) => http().delete(path).set('Authorization', auth(who)).send(body),
  };
}

/** `{ Authorization: … }` for supertest's `.set(...)`: `t.http().post(path).set(authHeader(admin)).send(body)`. */
export const authHeader = (who: Credentials): { Authorization: string } => ({ Authorization: authorizationOf(who) });

/** Secrets that must never leave the service in a user object: no password field, no argon2 hash. */
export function expectNoSecrets(value: unknown): void {
  const text = JSON.stringify(value);
  expect(text).not.toMatch(/"password(_?hash)?"\s*:/i);
  expect(text).not.toMatch(/\$argon2/);
}

function expectStatus(res: Response, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
}

// ---------------------------------------------------------------------------------------------
// Sign-in and setup
// ---------------------------------------------------------------------------------------------

export const unique = (prefix: string): string => `${prefix}-${randomBytes(4).toString('hex')}`;

/** The slug the service derives from a name of words and `unique` suffixes when none is given: lower case, spaces as dashes. */
export const slugOfName = (name: string): string => name.toLowerCase().replace(/ /g, '-');

export interface SignedIn {
  membershipId: string;
  userId: string;
  username: string;
  password: string;
  accessToken: string;
  refreshToken: string;
  /** `Bearer <access token>` */
  auth: string;
}

export interface Installation {
  /** The system membership created by setup. */
  membership: ApiObject;
  admin: SignedIn;
  application: { id: string; secret: string; basic: string };
  setupResponse: ApiObject;
}

export interface MembershipOptions {
  expires_in?: number;
  refresh_token_expires_in?: number;
  scoped_token_expires_in?: number;
}

export async function signIn(t: TestApp, membershipId: string, username: string, password: string): Promise<SignedIn> {
  const res = await t.http().post('/generate-token').set('X-Service-Alias', membershipId).send({ username, password });
  expectStatus(res, 201, 'signIn');
  return {
    membershipId,
    userId: '',
    username,
    password,
    accessToken: res.body.access_token,
    refreshToken: res.body.refresh_token,
    auth: bearer(res.body.access_token),
  };
}

/** POST /setup on a fresh app: the system membership, its admin (signed in) and an application. */
export async function setupInstallation(t: TestApp, membership: MembershipOptions = {}): Promise<Installation> {
  const username = unique('admin');
  const password = 'correct horse battery';
  const res = await t
    .http()
    .post('/setup')
    .set('X-Setup-Token', TEST_SETUP_TOKEN)
    .send({
      membership: { name: unique('System'), ...membership },
      user: { username, email_address: `${username}@example.com`, password, firstname: 'Ada', lastname: 'Admin' },
      application: { name: unique('app') },
    });
  expectStatus(res, 201, 'setupInstallation');
  const membershipId = res.body.membership._id as string;
  const admin = await signIn(t, membershipId, username, password);
  admin.userId = res.body.user._id;
  const application = res.body.application as { _id: string; secret: string };
  return {
    membership: res.body.membership,
    admin,
    application: { id: application._id, secret: application.secret, basic: basic(application._id, application.secret) },
    setupResponse: res.body,
  };
}

export interface BootedInstallation {
  t: TestApp;
  inst: Installation;
  /** The setup admin, signed in (`inst.admin`). */
  admin: SignedIn;
}

/** Boots the real app (`startTestApp`) and runs POST /setup on it: the usual `beforeAll` of a suite. */
export async function bootInstallation(options: TestAppOptions & { membership?: MembershipOptions } = {}): Promise<BootedInstallation> {
  const { membership, ...appOptions } = options;
  const t = await startTestApp(appOptions);
  const inst = await setupInstallation(t, membership);
  return { t, inst, admin: inst.admin };
}

export interface BootedTenants extends BootedInstallation {
  /** A membership of its own, with a signed-in admin: the suite works in it. */
  tenant: CreatedMembership;
  /** A second membership, for the isolation checks. */
  other: CreatedMembership;
}

/** `bootInstallation`, then two memberships created by the setup admin: one to work in, one to stay out of. */
export async function bootTenants(options: TestAppOptions = {}): Promise<BootedTenants> {
  const booted = await bootInstallation(options);
  const tenant = await createMembership(booted.t, booted.admin);
  const other = await createMembership(booted.t, booted.admin);
  return { ...booted, tenant, other };
}

/**
 * Registers the `beforeAll` that boots an installation and the `afterAll` that closes it, so a
 * suite opens with one line instead of repeating `let t; let inst; beforeAll(...); afterAll(...)`.
 * What it booted is read through getters, because it exists only once `beforeAll` has run.
 */
export function useInstallation(options: TestAppOptions & { membership?: MembershipOptions } = {}): BootedInstallation {
  return useStarted('the installation', () => bootInstallation(options), (booted) => booted.t.close());
}

/** `useInstallation`, with the two memberships of `bootTenants`. */
export function useTenants(options: TestAppOptions = {}): BootedTenants {
  return useStarted('the installation', () => bootTenants(options), (booted) => booted.t.close());
}

// ---------------------------------------------------------------------------------------------
// Memberships, roles, applications
// ---------------------------------------------------------------------------------------------

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
    const credentials = basic(app._id, app.secret);
    created.application = { application: app, id: app._id, secret: app.secret, basic: credentials, auth: credentials, membershipId };
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
  const res = await as(t, caller).post(`/memberships/${caller.membershipId}/roles`, { name: unique('Role'), permissions: [], ...body });
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
  const res = await as(t, caller).post(`/memberships/${caller.membershipId}/applications`, { name: unique('app'), ...body });
  expectStatus(res, 201, 'createApplication');
  const credentials = basic(res.body._id, res.body.secret);
  return { application: res.body, id: res.body._id, secret: res.body.secret, basic: credentials, auth: credentials, membershipId: caller.membershipId };
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

/** 400 ModelValidationError, exactly the error body, with one of its `errors` naming `field`. */
export function expectFieldRefused(res: Response, field: string): void {
  expect(res.status).toBe(400);
  expect(res.body).toEqual({
    statusCode: 400,
    errorCode: 'ModelValidationError',
    message: expect.any(String),
    errors: expect.arrayContaining([{ field, message: expect.any(String) }]),
  });
}

/** A filter nested `levels` deep through `$and` (the top-level filter is level 1). */
export function nestedFilter(levels: number, leaf: Record<string, unknown>): Record<string, unknown> {
  let filter: Record<string, unknown> = leaf;
  for (let i = 1; i < levels; i++) filter = { $and: [filter] };
  return filter;
}

/**
 * `_query` bodies that must all answer 400 InvalidQuery on any resource: unsupported operators,
 * SQL in field names, too deep, a hidden field in where/select.
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
    // More than 1000 `$in` values never reach the query: the body budget counts array elements
    // with the keys, 1000 in all (third review), and answers ModelValidationError first.
    { name: 'filter on a hidden field', body: { where: { [hiddenField]: 'x' } } },
    { name: 'exists on a hidden field', body: { where: { [hiddenField]: { $exists: true } } } },
    { name: 'select of a hidden field', body: { select: { [hiddenField]: 1 } } },
    { name: 'where that is not an object', body: { where: ['x'] } },
    { name: 'operator mixed with plain keys', body: { where: { [field]: { $eq: 'x', plain: 1 } } } },
    { name: 'a body key besides where and select', body: { filter: { [field]: 'x' } } },
  ];
}

// ---------------------------------------------------------------------------------------------
// Users, user types and what the event table says about them
// ---------------------------------------------------------------------------------------------

/** A user as the API answers it (custom fields included), plus the password it was created with. */
export interface UserDoc {
  _id: string;
  username: string;
  email_address: string;
  password: string;
  sys: { created_at: string; created_by: string; modified_at?: string; modified_by?: string };
  [field: string]: unknown;
}

/** A user type as the API answers it. */
export interface UserTypeDoc {
  _id: string;
  name: string;
  slug: string;
  sys: { created_at: string; created_by: string };
  [field: string]: unknown;
}

export const DEFAULT_PASSWORD = 'a long enough password';

export const usersPath = (membershipId: string): string => `/memberships/${membershipId}/users`;
export const userTypesPath = (membershipId: string): string => `/memberships/${membershipId}/user-types`;

/** A create-user body with unique username and e-mail; `overrides` replace or add fields (custom ones too). */
export function userBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const username = unique('user');
  return { username, email_address: `${username}@example.com`, password: DEFAULT_PASSWORD, ...overrides };
}

/** POST a user as `auth`; fails the test unless it answers 201. */
export async function createUser(t: TestApp, auth: ApiCaller, overrides: Record<string, unknown> = {}): Promise<UserDoc> {
  const body = userBody(overrides);
  const res = await as(t, auth).post(usersPath(auth.membershipId), body);
  expectStatus(res, 201, 'createUser');
  return { ...(res.body as UserDoc), password: body.password as string };
}

/** Creates a user and signs it in. */
export async function createSignedInUser(t: TestApp, admin: ApiCaller, overrides: Record<string, unknown> = {}): Promise<{ user: UserDoc; session: SignedIn }> {
  const user = await createUser(t, admin, overrides);
  const session = await signIn(t, admin.membershipId, user.username, user.password);
  session.userId = user._id;
  return { user, session };
}

/** POST a user type as `auth`; fails the test unless it answers 201. */
export async function createUserType(t: TestApp, auth: ApiCaller, body: Record<string, unknown>): Promise<UserTypeDoc> {
  const res = await as(t, auth).post(userTypesPath(auth.membershipId), { name: unique('Type'), ...body });
  expectStatus(res, 201, 'createUserType');
  return res.body as UserTypeDoc;
}

/** The mutable fields of a user response, as a PUT body (custom fields included). */
export function putBodyOf(user: Record<string, unknown>, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const { _id, membership_id, sys, source_provider, password, ...rest } = user;
  void _id;
  void membership_id;
  void sys;
  void source_provider;
  void password;
  return { ...rest, ...overrides };
}

/**
 * Events of one type whose document or prior has `_id` `resourceId`, as `caller` reads them over
 * POST /memberships/{id}/events/_query: the suites that check the events API answer use this.
 */
export async function queryEventsAbout(t: TestApp, caller: ApiCaller, eventType: string, resourceId: string): Promise<ApiObject[]> {
  const res = await as(t, caller).post(`/memberships/${caller.membershipId}/events/_query`, {
    where: { event_type: eventType, $or: [{ 'document._id': resourceId }, { 'prior._id': resourceId }] },
  });
  expectStatus(res, 200, 'queryEventsAbout');
  return res.body.items;
}

/**
 * Events of one type whose document or prior is about `resourceId`, oldest first. Read from the
 * event table of the app under test: the events API belongs to another feature, and the
 * event log is a side effect of the routes tested here, not their answer.
 */
export async function eventsAbout(t: TestApp, membershipId: string, eventType: string, resourceId: string): Promise<EventRow[]> {
  const { db } = t.app.get<Database>(DATABASE);
  return db
    .select()
    .from(events)
    .where(
      and(
        eq(events.membershipId, membershipId),
        eq(events.eventType, eventType),
        sql`(${events.document} ->> '_id' = ${resourceId} or ${events.prior} ->> '_id' = ${resourceId} or ${events.document} ->> 'user_id' = ${resourceId})`,
      ),
    )
    .orderBy(asc(events.eventTime), asc(events.id));
}

// ---------------------------------------------------------------------------------------------
// Memberships' settings and their mail through an SMTP server on 127.0.0.1
// ---------------------------------------------------------------------------------------------

/** PUT the tenant's membership with `settings`, its name kept; fails unless 200. Answers the membership. */
export async function updateMembership(t: TestApp, tenant: CreatedMembership, settings: ApiObject): Promise<ApiObject> {
  const res = await as(t, tenant.admin).put(`/memberships/${tenant.membershipId}`, { name: tenant.membership.name, ...settings });
  expectStatus(res, 200, 'updateMembership');
  return res.body;
}

/** A plain-SMTP mail provider on 127.0.0.1: a MailCatcher, or a server that misbehaves on purpose. */
export function loopbackSmtpProvider(port: number, slug = 'catcher'): ApiObject {
  return { slug, name: `Loopback ${slug}`, type: 'smtp', host: '127.0.0.1', port, tls: 'none' };
}

export const mailhooksPath = (membershipId: string): string => `/memberships/${membershipId}/mailhooks`;

/** POST a mail hook in the caller's membership, from no-reply@example.com through provider `catcher` unless `body` says otherwise; fails unless 201. */
export async function createMailhook(t: TestApp, caller: ApiCaller, body: ApiObject): Promise<ApiObject> {
  const res = await as(t, caller).post(mailhooksPath(caller.membershipId), { name: unique('mailhook'), mail_provider: 'catcher', from_address: 'no-reply@example.com', ...body });
  expectStatus(res, 201, 'createMailhook');
  return res.body;
}

// ---------------------------------------------------------------------------------------------
// Webhooks, events, and waiting for what arrives asynchronously
// ---------------------------------------------------------------------------------------------

/** Older name of ApiObject, kept for the webhook and mail specs. */
export type Json = ApiObject;

export const webhooksPath = (membershipId: string): string => `/memberships/${membershipId}/webhooks`;
export const eventsPath = (membershipId: string): string => `/memberships/${membershipId}/events`;

/** A valid create body; `overrides` replace top-level fields, `request` is merged. */
export function webhookBody(url: string, overrides: Json = {}): Json {
  const { request, ...rest } = overrides;
  return {
    name: unique('hook'),
    event: 'UserCreated',
    status: 'active',
    try_count: 1,
    ...rest,
    request: { method: 'POST', url, ...(request ?? {}) },
  };
}

export async function createWebhook(t: TestApp, caller: ApiCaller, url: string, overrides: Json = {}): Promise<Json> {
  const res = await as(t, caller).post(webhooksPath(caller.membershipId), webhookBody(url, overrides));
  expectStatus(res, 201, 'createWebhook');
  return res.body;
}

/** POST /events/_query; answers the items (fails on any status but 200). */
export async function queryEvents(t: TestApp, caller: ApiCaller, where: Record<string, unknown>, query: Record<string, string> = {}): Promise<Json[]> {
  const res = await t.http().post(`${eventsPath(caller.membershipId)}/_query`).query(query).set('Authorization', caller.auth).send({ where });
  expectStatus(res, 200, 'queryEvents');
  return res.body.items;
}

/** Polls `check` until it answers a value that is not undefined, or fails after the deadline. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A promise the test settles itself: `hold.release()` lets whatever awaits `hold.promise` go on. */
export function deferred<T = void>(): { promise: Promise<T>; release: (value: T) => void } {
  let release!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (release = resolve));
  return { promise, release };
}

/**
 * Awaits `promise`, failing after `timeoutMs` instead of hanging: for an answer that must come
 * while the test still holds something back (a lookup, a receiver), which would otherwise never come.
 */
export async function settles<T>(promise: Promise<T>, what: string, timeoutMs = 10_000): Promise<T> {
  let outcome: { value: T } | { error: unknown } | undefined;
  promise.then(
    (value) => (outcome = { value }),
    (error: unknown) => (outcome = { error }),
  );
  const settled = await eventually(async () => outcome, what, timeoutMs);
  if ('error' in settled) throw settled.error;
  return settled.value;
}

/**
 * Starts a sign-in with `send` (a password step of any route), holds it right after the app's next
 * password check has verified until `meanwhile` has answered, then lets it go on: what a sign-in
 * meets when a change to its user lands during its argon2 verify. Answers what `send` answered.
 */
export async function aroundPasswordCheck<T>(t: TestApp, send: () => Promise<T>, meanwhile: () => Promise<void>): Promise<T> {
  const hasher = t.app.get(PasswordHasher);
  const verify = hasher.verify.bind(hasher);
  const checked = deferred();
  const hold = deferred();
  const spy = jest.spyOn(hasher, 'verify').mockImplementationOnce(async (hash, password) => {
    const right = await verify(hash, password);
    checked.release();
    await hold.promise;
    return right;
  });
  try {
    const answer = send();
    await settles(checked.promise, 'the password check');
    await meanwhile();
    hold.release();
    return await answer;
  } finally {
    spy.mockRestore();
  }
}

/** The result events (WebhookRequestSent/Failed) of one webhook, oldest first, once there are at least `count`. */
export async function waitForResults(t: TestApp, caller: ApiCaller, webhookId: string, count: number, timeoutMs = 5000): Promise<Json[]> {
  return eventually(
    async () => {
      const items = await queryEvents(
        t,
        caller,
        { event_type: { $in: ['WebhookRequestSent', 'WebhookRequestFailed'] }, 'document.webhook_id': webhookId },
        { sort: 'event_time asc' },
      );
      return items.length >= count ? items : undefined;
    },
    `${count} result event(s) of webhook ${webhookId}`,
    timeoutMs,
  );
}
