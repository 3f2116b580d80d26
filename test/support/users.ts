import { and, asc, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../../src/database/database';
import { events, type EventRow } from '../../src/database/schema';
import type { TestApp } from './app';
import { signIn, unique, type SignedIn } from './factories';

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
export async function createUser(t: TestApp, auth: SignedIn, overrides: Record<string, unknown> = {}): Promise<UserDoc> {
  const body = userBody(overrides);
  const res = await t.http().post(usersPath(auth.membershipId)).set('Authorization', auth.auth).send(body);
  if (res.status !== 201) throw new Error(`create user failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { ...(res.body as UserDoc), password: body.password as string };
}

/** Creates a user and signs it in. */
export async function createSignedInUser(t: TestApp, admin: SignedIn, overrides: Record<string, unknown> = {}): Promise<{ user: UserDoc; session: SignedIn }> {
  const user = await createUser(t, admin, overrides);
  const session = await signIn(t, admin.membershipId, user.username, user.password);
  session.userId = user._id;
  return { user, session };
}

/** POST a user type as `auth`; fails the test unless it answers 201. */
export async function createUserType(t: TestApp, auth: SignedIn, body: Record<string, unknown>): Promise<UserTypeDoc> {
  const res = await t
    .http()
    .post(userTypesPath(auth.membershipId))
    .set('Authorization', auth.auth)
    .send({ name: unique('Type'), ...body });
  if (res.status !== 201) throw new Error(`create user type failed: ${res.status} ${JSON.stringify(res.body)}`);
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
