import { Inject, Injectable } from '@nestjs/common';
import { and, eq, getTableColumns, inArray, isNull, notExists, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { Batcher } from '../common/batcher';
import { DATABASE, type Database } from '../database/database';
import { userHasLogin } from '../database/user-login';
import { eventRecords, eventWrites } from '../events/event.repository';
import {
  events,
  memberships,
  mfaSignIns,
  oidcAuthorizationCodes,
  oidcInteractions,
  sessions,
  tokenCodes,
  tokenSessions,
  users,
  type EventRow,
  type MembershipRow,
  type SessionRow,
  type TokenSessionRow,
  type UserRecord,
  type UserRow,
} from '../database/schema';

/**
 * `grant_type` of the first record of a session a device code opened: it tells that session from
 * one a sign-in opened (TokenRevoked names a grant for OpenID Provider records only).
 */
export const DEVICE_CODE_SESSION_GRANT = 'device_code';

export type NewTokenSession = typeof tokenSessions.$inferInsert & { createdAt: Date };
import { runListQuery, type ListPage, type ListRequest } from '../common/query';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { TOKEN_LISTING_QUERY_SCHEMA, tokenListing, type TokenListingRow } from './token-listing.schema';

/** The columns sessions and token records share for revoking them alike. */
interface RevocableColumns {
  membershipId: PgColumn;
  userId: PgColumn;
  revokedAt: PgColumn;
}

/** Which sessions a listing shows: live ones (not revoked, not yet expired) or revoked ones. */
export type SessionListingState = 'active' | 'revoked';

/** The membership fields that verify and sign tokens. */
export type SigningMembership = Pick<
  MembershipRow,
  'id' | 'name' | 'slug' | 'secretKey' | 'expiresIn' | 'refreshTokenExpiresIn' | 'scopedTokenExpiresIn'
>;

/** What a token check needs of its token record. */
export type VerifiedSession = Pick<
  TokenSessionRow,
  | 'id'
  | 'userId'
  | 'kind'
  | 'parentId'
  | 'scopes'
  | 'accessJti'
  | 'refreshJti'
  | 'accessExpiresAt'
  | 'revokedAt'
  | 'revokeReason'
  | 'ipAddress'
  | 'userAgent'
>;

/** The sign-in session a token belongs to, as every token check reads it. */
export type CheckedFamily = Pick<SessionRow, 'id' | 'revokedAt'>;

export interface VerificationRecord {
  membership: SigningMembership;
  session: VerifiedSession | null;
  family: CheckedFamily | null;
  user: UserRecord | null;
}

/** What deciding a caller's access needs: the key that signed the token, the session, the user's grants. */
export interface CallerVerificationRecord {
  membership: Pick<MembershipRow, 'name' | 'slug' | 'secretKey'>;
  session: Pick<TokenSessionRow, 'userId' | 'scopes' | 'accessJti' | 'refreshJti' | 'revokedAt'> | null;
  family: CheckedFamily | null;
  user: Pick<UserRow, 'role' | 'permissions' | 'forbidden' | 'isActive'> | null;
}

/** The caller's record with the whole user (for /me). */
export interface UserVerificationRecord extends Omit<CallerVerificationRecord, 'user'> {
  user: UserRecord | null;
}

/** The membership columns that sign and verify tokens. */
export const signingColumns = {
  id: memberships.id,
  name: memberships.name,
  slug: memberships.slug,
  secretKey: memberships.secretKey,
  expiresIn: memberships.expiresIn,
  refreshTokenExpiresIn: memberships.refreshTokenExpiresIn,
  scopedTokenExpiresIn: memberships.scopedTokenExpiresIn,
};

/** Every user column but the password hash, which a token check never needs. */
export const { passwordHash: _passwordHash, ...userRecordColumns } = getTableColumns(users);

/** The session columns every token check reads (their first is NOT NULL: see `verificationLookup`). */
const checkedSessionColumns = {
  userId: tokenSessions.userId,
  scopes: tokenSessions.scopes,
  accessJti: tokenSessions.accessJti,
  refreshJti: tokenSessions.refreshJti,
  revokedAt: tokenSessions.revokedAt,
};
const checkedMembershipColumns = { name: memberships.name, slug: memberships.slug, secretKey: memberships.secretKey };
/** The token's sign-in session: its own object, since drizzle would not null an object mixing two tables. */
const checkedFamilyColumns = { id: sessions.id, revokedAt: sessions.revokedAt };

type Columns = Record<string, PgColumn>;

/**
 * Everything a Bearer token's validity depends on, in one round trip of primary-key lookups: the
 * membership's key, the token record, its sign-in session (revoked as a whole by logout, reuse
 * of a rotated refresh token, freezing...) and its user. The prepared variants below (and the
 * token operations' `verificationBatchLookup`) differ only in the columns they read, because the
 * driver's per-column work (row description, parsers, mapping) was a third of a request's Node
 * time when every route read the widest row.
 * Drizzle reads a left-joined object as absent when its FIRST column is null, so each object
 * must start with a NOT NULL column (a user's role, for one, may be null).
 *
 * The session and the user are lateral subqueries behind `limit 1` (each is a primary-key lookup),
 * which the planner cannot flatten into joins: one probe of each per token record, whatever the
 * tables' sizes (drizzle leaves an `offset 0` out). As plain joins, the planner hashed the tables
 * of a small membership (50 users, a few sessions) on every verification: 100-190 µs of the
 * server's execution per lookup in the bench, 45-80 µs as probes (pg_stat_statements).
 */
function verificationLookup<TMembership extends Columns, TSession extends Columns, TUser extends Columns>(
  db: Database['db'],
  membership: TMembership,
  session: TSession,
  user: TUser,
) {
  const family = familyProbe(db, tokenSessions.sessionId);
  const owner = ownerProbe(db, user, tokenSessions.userId);
  return db
    .select({ membership, session, family: columnsOf(family, checkedFamilyColumns), user: columnsOf(owner, user) })
    .from(memberships)
    .leftJoin(tokenSessions, and(eq(tokenSessions.id, sql.placeholder('tokenId')), eq(tokenSessions.membershipId, memberships.id)))
    .leftJoinLateral(family, sql`true`)
    .leftJoinLateral(owner, sql`true`)
    .where(eq(memberships.id, sql.placeholder('membershipId')));
}

/** The token's sign-in session, a lateral probe by its key (see `verificationLookup`). */
function familyProbe(db: Database['db'], sessionId: SQLWrapper) {
  return db.select(checkedFamilyColumns).from(sessions).where(eq(sessions.id, sessionId)).limit(1).as('family');
}

/** The token's user in the membership, a lateral probe by its key (see `verificationLookup`). */
function ownerProbe(db: Database['db'], user: Columns, userId: SQLWrapper) {
  return db
    .select(user)
    .from(users)
    .where(and(eq(users.id, userId), eq(users.membershipId, memberships.id)))
    .limit(1)
    .as('owner');
}

/** A subquery's columns under the keys it selected them by. */
function columnsOf<T extends Columns>(subquery: object, selected: T): T {
  return Object.fromEntries(Object.keys(selected).map((key) => [key, Reflect.get(subquery, key)])) as T;
}

/**
 * All of it (38 columns), for the token operations (refresh, scoped tokens, revocation), which sign
 * new tokens and copy the session's details: the lookup of `verificationLookup` for any number of
 * tokens in one statement, one row per token whose membership exists, `ord` naming its place in
 * the input (1-based). TokenSessionRepository batches the lookups that arrive while one is on its
 * way: refresh made 80-83% of its floor this way, 67-84% with a statement per token (2026-12-03,
 * builds alternating, two pairs; about 3.7 tokens per statement at 16 connections, the service's
 * CPU per refresh 711-750 µs against 852-1078, PostgreSQL's 554-591 against 671-918).
 *
 * The record, its session and its user are lateral subqueries behind `limit 1`: one probe of each
 * by its key per token, whatever the tables' sizes. The memberships are read by key for the whole
 * statement (`= any`), then joined: as a lateral subquery too, PostgreSQL took 60-80 µs more per
 * refresh, and joined plainly without the `any`, it read the whole table for each statement.
 */
export function verificationBatchLookup(db: Database['db']) {
  const input = { membershipId: sql`input.membership_id`, tokenId: sql`input.token_id` };
  const session = {
    ...checkedSessionColumns,
    id: tokenSessions.id,
    kind: tokenSessions.kind,
    parentId: tokenSessions.parentId,
    accessExpiresAt: tokenSessions.accessExpiresAt,
    revokeReason: tokenSessions.revokeReason,
    ipAddress: tokenSessions.ipAddress,
    userAgent: tokenSessions.userAgent,
  };
  const record = db
    .select({ ...session, sessionId: tokenSessions.sessionId })
    .from(tokenSessions)
    .where(and(eq(tokenSessions.id, input.tokenId), eq(tokenSessions.membershipId, memberships.id)))
    .limit(1)
    .as('record');
  const family = familyProbe(db, record.sessionId);
  const owner = ownerProbe(db, userRecordColumns, record.userId);
  return db
    .select({
      ord: sql<number>`input.ord::int`,
      membership: signingColumns,
      session: columnsOf(record, session),
      family: columnsOf(family, checkedFamilyColumns),
      user: columnsOf(owner, userRecordColumns),
    })
    .from(sql`unnest(${sql.placeholder('membershipIds')}::text[], ${sql.placeholder('tokenIds')}::text[]) with ordinality as input(membership_id, token_id, ord)`)
    .innerJoin(memberships, and(eq(memberships.id, input.membershipId), sql`${memberships.id} = any(${sql.placeholder('membershipIds')}::text[])`))
    .leftJoinLateral(record, sql`true`)
    .leftJoinLateral(family, sql`true`)
    .leftJoinLateral(owner, sql`true`);
}

function prepareVerificationBatch(db: Database['db']) {
  return verificationBatchLookup(db).prepare('token_verification_batch');
}

/** A token to look up: its membership (`prn`) and its record (`tid`), as the token claims them. */
interface TokenLookup {
  membershipId: string;
  tokenId: string;
}

/** What access decisions need (14 columns): most authenticated routes run this one. */
export function callerVerificationLookup(db: Database['db']) {
  const user = { isActive: users.isActive, role: users.role, permissions: users.permissions, forbidden: users.forbidden };
  return verificationLookup(db, checkedMembershipColumns, checkedSessionColumns, user);
}

function prepareCallerVerification(db: Database['db']) {
  return callerVerificationLookup(db).prepare('caller_verification');
}

/** The caller's checks with every user column but the password hash (27 columns): what /me answers. */
function prepareUserVerification(db: Database['db']) {
  return verificationLookup(db, checkedMembershipColumns, checkedSessionColumns, userRecordColumns).prepare('user_verification');
}

/**
 * Sign-in's lookup in one round trip: the membership (its signing fields) and the user whose
 * username (case-insensitive) or e-mail address is the login, if any.
 */
function prepareSignIn(db: Database['db']) {
  return db
    .select({ membership: signingColumns, user: users })
    .from(memberships)
    .leftJoin(
      users,
      and(
        eq(users.membershipId, memberships.id),
        userHasLogin(sql.placeholder('login')),
      ),
    )
    .where(eq(memberships.id, sql.placeholder('membershipId')))
    .limit(1)
    .prepare('sign_in_lookup');
}

/** The revoke reason of a token record whose refresh token was used with revoke=true (written by `prepareIssue`). */
export const ROTATED_REASON = 'refreshed';

/**
 * What an issuance uses up in its own statement, so that of two concurrent uses exactly one issues:
 * the token record being refreshed (marked `refreshed`), an OpenID Provider authorization code
 * (by its digest; the new record's id is written on it, so a later reuse knows what to revoke), or
 * an approved device code (marked `consumed`).
 */
export type UsedUpByIssuance =
  | { kind: 'refreshed_record'; tokenId: string; revokedBy: string }
  | { kind: 'authorization_code'; digest: string }
  | { kind: 'device_code'; codeId: string };

/** How an issuance stands to its sign-in session and to what it uses up: each has a statement of its own. */
interface IssueShape {
  opensSession: boolean;
  usedUp: UsedUpByIssuance['kind'] | null;
}

const issueShapeKey = ({ opensSession, usedUp }: IssueShape): string => `${opensSession ? 'open' : 'join'}_${usedUp ?? 'none'}`;

/**
 * Issuance as one prepared statement per shape (sign-in opens a session, a refresh joins one and
 * may use up the record it refreshes, the OpenID Provider's code grant uses up its code): use up
 * what `usedUp` names (only if still unused), open the sign-in session (sign-in) or join it (only
 * while it is not revoked), create the new record (only if all held) and write its events from one
 * JSON parameter. The events inserted, returned, say whether the record was created.
 *
 * A statement per shape rather than one whose flags switch parts off: PostgreSQL initialises every
 * part of a plan on each execution, the parts a flag switches off included, and each insert or
 * update opens its table and every index of it (under refresh, with one statement holding all six
 * writes, 22% of the server's CPU samples were spent initialising plans).
 *
 * Using up locks the row used: a concurrent use waits for this statement to commit, then finds it
 * used and creates nothing, and whatever it revokes after that sees this statement's record.
 *
 * Joining takes a share lock on the session row, whose check reads its latest version: a
 * revocation committed while this statement waited is seen, so no token is ever added to a
 * revoked session, and a revocation waiting for this statement sees its record. Share locks do
 * not wait for each other, so concurrent refreshes of one session do not queue on its row.
 *
 * A device code is used up only behind that lock (the user's row when opening, the session when
 * joining), and a session opened for it only once it is: a user-wide revocation locks the user's
 * row first (`lockUserAgainstIssuing`), then revokes sessions, then denies approved codes, so a
 * poll under way either commits before it (and its session is revoked) or waits and finds its
 * code denied. Taking the code first would let the two wait for each other.
 */
function prepareIssue(db: Database['db'], shape: IssueShape) {
  const p = (name: string) => sql.placeholder(name);
  // Opening reads the user's row with a share lock, as joining reads the session's: a sign-in
  // whose checks ran before its user was deleted, frozen or given a new password opens nothing (a
  // deletion would fail the foreign key, a 500; a freeze or a password change would leave a
  // session made after its revocation), and a change waiting for this statement revokes what it
  // opened. A password sign-in names the hash its password was checked against.
  const activeUser = sql`select 1 as one from ${users}
    where id = ${p('userId')}::text and membership_id = ${p('membershipId')}::text and is_active
      and (${p('passwordHash')}::text is null or password_hash = ${p('passwordHash')}::text)
    for share`;
  const userRow = db.$with('user_row', { one: sql<number>`one` }).as(sql`${activeUser}`);
  const joined = db.$with('in_session', { id: sql<string>`id` }).as(
    sql`select id from ${sessions}
      where id = ${p('sessionId')}::text and membership_id = ${p('membershipId')}::text and revoked_at is null
      for share`,
  );
  const usedUp = {
    refreshed_record: db.$with('used_up', { id: sql<string>`id` }).as(
      sql`update ${tokenSessions} set revoked_at = now(), revoked_by = ${p('revokedBy')}::text, revoke_reason = 'refreshed'
        where membership_id = ${p('membershipId')}::text and id = ${p('consumedId')}::text and revoked_at is null
        returning id`,
    ),
    authorization_code: db.$with('used_up', { id: sql<string>`id` }).as(
      sql`update ${oidcAuthorizationCodes} set consumed_at = now(), issued_token_id = ${p('id')}::text
        where membership_id = ${p('membershipId')}::text and id = ${p('codeDigest')}::text and consumed_at is null
        returning id`,
    ),
    device_code: db.$with('used_up', { id: sql<string>`id` }).as(
      sql`update ${tokenCodes} set state = 'consumed'
        where membership_id = ${p('membershipId')}::text and id = ${p('deviceCodeId')}::text and state = 'approved'
          and exists (select 1 from ${sql.raw(shape.opensSession ? 'user_row' : 'in_session')})
        returning id`,
    ),
  };
  const used = shape.usedUp ? usedUp[shape.usedUp] : undefined;
  const gatedUse = shape.usedUp === 'device_code';
  // Parent and child rows in one statement: the foreign key is checked at its end.
  const opened = db.$with('in_session', { id: sql<string>`id` }).as(
    gatedUse
      ? sql`insert into ${sessions} (id, membership_id, user_id, created_at)
          select ${p('sessionId')}::text, ${p('membershipId')}::text, ${p('userId')}::text, ${p('createdAt')}::timestamptz
          where exists (select 1 from used_up)
          returning id`
      : sql`insert into ${sessions} (id, membership_id, user_id, created_at)
          select ${p('sessionId')}::text, ${p('membershipId')}::text, ${p('userId')}::text, ${p('createdAt')}::timestamptz
          from (${activeUser}) as still_active
          returning id`,
  );
  const session = shape.opensSession ? opened : joined;
  const created = db.$with('created', { id: sql<string>`id` }).as(
    sql`insert into ${tokenSessions} (id, session_id, membership_id, user_id, kind, client_id, grant_type, parent_id, auth_time, amr, scopes, resource,
        access_jti, refresh_jti, access_expires_at, refresh_expires_at, expires_at, ip_address, user_agent, created_at)
      select ${p('id')}::text, ${p('sessionId')}::text, ${p('membershipId')}::text, ${p('userId')}::text, ${p('kind')}::text,
        ${p('clientId')}::text, ${p('grantType')}::text, ${p('parentId')}::text, ${p('authTime')}::timestamptz, ${p('amr')}::jsonb,
        ${p('scopes')}::jsonb, ${p('resource')}::text, ${p('accessJti')}::text, ${p('refreshJti')}::text, ${p('accessExpiresAt')}::timestamptz,
        ${p('refreshExpiresAt')}::timestamptz, ${p('expiresAt')}::timestamptz, ${p('ipAddress')}::text, ${p('userAgent')}::text,
        ${p('createdAt')}::timestamptz
      where exists (select 1 from in_session)${used ? sql` and exists (select 1 from used_up)` : sql``}
      returning id`,
  );
  // A CTE names only those before it: the gate of a gated use comes first, then the use, then the session.
  const ordered = !used
    ? [session]
    : !gatedUse
      ? [used, session]
      : shape.opensSession
        ? [userRow, used, session]
        : [session, used];
  // The events and their webhook deliveries, written only if the record is (contract "Durable webhook delivery").
  const written = eventWrites(db, undefined, sql`exists (select 1 from created)`);
  return db
    .with(...ordered, created, written.source, written.queued)
    .insert(events)
    .select(written.rows)
    .returning({ id: events.id })
    .prepare(`issue_token_session_${issueShapeKey(shape)}`);
}

export interface SignInRecord {
  membership: SigningMembership;
  user: UserRow | null;
}

@Injectable()
export class TokenSessionRepository {
  private readonly verificationBatch: ReturnType<typeof prepareVerificationBatch>;
  /** The token operations' lookups, as many in one statement as arrived while the last one ran. */
  private readonly verifications = new Batcher<TokenLookup, VerificationRecord | undefined>((lookups) => this.findForVerifications(lookups));
  private readonly callerVerificationQuery: ReturnType<typeof prepareCallerVerification>;
  private readonly userVerificationQuery: ReturnType<typeof prepareUserVerification>;
  private readonly signInQuery: ReturnType<typeof prepareSignIn>;
  /** The issuing statements by shape, each prepared on first use. */
  private readonly issueStatements = new Map<string, ReturnType<typeof prepareIssue>>();

  constructor(@Inject(DATABASE) private readonly database: Database) {
    this.verificationBatch = prepareVerificationBatch(database.db);
    this.callerVerificationQuery = prepareCallerVerification(database.db);
    this.userVerificationQuery = prepareUserVerification(database.db);
    this.signInQuery = prepareSignIn(database.db);
  }

  /** Undefined when the membership does not exist; `user` null when no user has that login. */
  async findSignInRecord(membershipId: string, login: string): Promise<SignInRecord | undefined> {
    const [row] = await this.signInQuery.execute({ membershipId, login: login.toLowerCase() });
    return row;
  }

  /** Undefined when the membership does not exist. Sent with the other lookups of the moment (`verifications`). */
  findForVerification(membershipId: string, tokenId: string): Promise<VerificationRecord | undefined> {
    return this.verifications.add({ membershipId, tokenId });
  }

  private async findForVerifications(lookups: readonly TokenLookup[]): Promise<(VerificationRecord | undefined)[]> {
    const rows = await this.verificationBatch.execute({
      membershipIds: lookups.map((lookup) => lookup.membershipId),
      tokenIds: lookups.map((lookup) => lookup.tokenId),
    });
    const records = Array.from<VerificationRecord | undefined>({ length: lookups.length });
    for (const { ord, ...record } of rows) records[ord - 1] = record;
    return records;
  }

  async findForCallerVerification(membershipId: string, tokenId: string): Promise<CallerVerificationRecord | undefined> {
    const [row] = await this.callerVerificationQuery.execute({ membershipId, tokenId });
    return row;
  }

  async findForUserVerification(membershipId: string, tokenId: string): Promise<UserVerificationRecord | undefined> {
    const [row] = await this.userVerificationQuery.execute({ membershipId, tokenId });
    return row;
  }

  /**
   * Creates a token record (and, with `opensSession`, its sign-in session) and writes its events
   * in ONE statement, atomic without BEGIN and COMMIT round trips (sign-in and refresh run it on
   * every call). With `usedUp`, the refreshed record or the authorization code is marked used in
   * the same statement and nothing is created unless it was still unused. Nothing is created in a
   * revoked session either, nor a session opened for a user deleted or made inactive meanwhile,
   * or, given `checkedPasswordHash`, whose password hash is no longer that one.
   * Answers whether the record was created.
   */
  async issue(
    session: NewTokenSession,
    eventRows: readonly EventRow[],
    opensSession: boolean,
    usedUp?: UsedUpByIssuance,
    checkedPasswordHash?: string,
  ): Promise<boolean> {
    // The events inserted say whether the session was: a session is never issued without one.
    if (!eventRows.length) throw new Error('A token session is issued with at least one event');
    const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);
    const shape: IssueShape = { opensSession, usedUp: usedUp?.kind ?? null };
    const key = issueShapeKey(shape);
    let statement = this.issueStatements.get(key);
    if (!statement) this.issueStatements.set(key, (statement = prepareIssue(this.database.db, shape)));
    const logged = await statement.execute({
      consumedId: usedUp?.kind === 'refreshed_record' ? usedUp.tokenId : null,
      revokedBy: usedUp?.kind === 'refreshed_record' ? usedUp.revokedBy : null,
      codeDigest: usedUp?.kind === 'authorization_code' ? usedUp.digest : null,
      deviceCodeId: usedUp?.kind === 'device_code' ? usedUp.codeId : null,
      passwordHash: checkedPasswordHash ?? null,
      id: session.id,
      sessionId: session.sessionId,
      membershipId: session.membershipId,
      userId: session.userId,
      kind: session.kind,
      parentId: session.parentId ?? null,
      clientId: session.clientId ?? null,
      grantType: session.grantType ?? null,
      authTime: iso(session.authTime),
      amr: session.amr ? JSON.stringify(session.amr) : null,
      scopes: session.scopes ? JSON.stringify(session.scopes) : null,
      resource: session.resource ?? null,
      accessJti: session.accessJti,
      refreshJti: session.refreshJti ?? null,
      accessExpiresAt: iso(session.accessExpiresAt),
      refreshExpiresAt: iso(session.refreshExpiresAt),
      expiresAt: iso(session.expiresAt),
      ipAddress: session.ipAddress ?? null,
      userAgent: session.userAgent ?? null,
      createdAt: iso(session.createdAt),
      ...eventRecords(eventRows),
    });
    return logged.length > 0;
  }

  /**
   * Revokes sign-in sessions and every token record of them still active (pairs refreshed from
   * them and scoped tokens included). Answers the token records it revoked (so the caller records
   * one event per record).
   */
  async revokeSessions(
    membershipId: string,
    sessionIds: readonly string[],
    revokedBy: string,
    reason: string,
  ): Promise<TokenSessionRow[]> {
    if (!sessionIds.length) return [];
    return this.revokeSessionsWhere(membershipId, { revokedBy, revokeReason: reason }, (_table, sessionId) => [
      inArray(sessionId, [...sessionIds]),
    ]);
  }

  /** Revokes one token record alone (a scoped token revoking itself), if still active. */
  async revokeTokenRecord(membershipId: string, tokenId: string, revokedBy: string, reason: string): Promise<TokenSessionRow[]> {
    return this.revokeRecords(membershipId, { revokedBy, revokeReason: reason }, eq(tokenSessions.id, tokenId));
  }

  /**
   * An OpenID Provider grant: its first record (`grantId`) and every record rotated from it (they
   * name it as `parent_id`), still active. The session goes on: a grant is one client's share of it.
   * Runs in the caller's transaction.
   */
  async revokeGrant(membershipId: string, grantId: string, revokedBy: string, reason: string): Promise<TokenSessionRow[]> {
    const grantSession = this.database.db
      .select({ id: tokenSessions.sessionId })
      .from(tokenSessions)
      .where(and(eq(tokenSessions.membershipId, membershipId), eq(tokenSessions.id, grantId)));
    await this.lockSessionsAgainstIssuing(membershipId, inArray(sessions.id, grantSession));
    return this.revokeRecords(membershipId, { revokedBy, revokeReason: reason }, or(eq(tokenSessions.id, grantId), eq(tokenSessions.parentId, grantId)));
  }

  /**
   * Every OpenID Provider grant of the user to one of `clientIds` (each record issued to them,
   * still active), in all of the user's sessions; the sessions go on. Runs in the caller's
   * transaction.
   */
  async revokeClientGrants(membershipId: string, userId: string, clientIds: readonly string[], revokedBy: string, reason: string): Promise<TokenSessionRow[]> {
    if (!clientIds.length) return [];
    await this.lockSessionsAgainstIssuing(membershipId, eq(sessions.userId, userId), isNull(sessions.revokedAt));
    return this.revokeRecords(membershipId, { revokedBy, revokeReason: reason }, eq(tokenSessions.userId, userId), inArray(tokenSessions.clientId, [...clientIds]));
  }

  /** Revokes the membership's token records that `which` picks (each caller names the records it means) and are still active; answers them. */
  private revokeRecords(membershipId: string, revocation: { revokedBy: string; revokeReason: string }, ...which: (SQL | undefined)[]): Promise<TokenSessionRow[]> {
    return this.database.db
      .update(tokenSessions)
      .set({ revokedAt: new Date(), ...revocation })
      .where(and(eq(tokenSessions.membershipId, membershipId), ...which, isNull(tokenSessions.revokedAt)))
      .returning();
  }

  /**
   * Locks the sessions `which` picks against issuing until the caller's transaction ends, in a
   * statement of its own, before a revocation that spares the sessions themselves (a grant).
   * Issuing (`issue`) reads its session `for share` before it marks the record it refreshes used;
   * under READ COMMITTED a revoking UPDATE that finds that record locked waits for the refresh and
   * then skips it (used now), while the record the refresh created is not in its snapshot and
   * would stay active. Waiting here for every refresh under way lets the UPDATE that follows, a
   * new statement, see what they created; a refresh that comes later waits for this transaction
   * and finds its record revoked.
   */
  private async lockSessionsAgainstIssuing(membershipId: string, ...which: SQL[]): Promise<void> {
    await this.database.db
      .select({ id: sessions.id })
      .from(sessions)
      .where(and(eq(sessions.membershipId, membershipId), ...which))
      .orderBy(sessions.id)
      .for('no key update');
  }

  /**
   * Locks the user's row against issuing until the caller's transaction ends: a statement opening
   * a session for the user (which reads the row `for share`) is waited for, so that the revocation
   * that follows sees the session it opened; one that comes later waits for this transaction.
   */
  async lockUserAgainstIssuing(membershipId: string, userId: string): Promise<void> {
    await this.database.db
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.membershipId, membershipId), eq(users.id, userId)))
      .for('no key update');
  }

  /** Every session of a user and its token records, optionally sparing one session (the caller's own, after a password change). */
  async revokeAllOfUser(
    membershipId: string,
    userId: string,
    revokedBy: string,
    reason: string,
    exceptSessionId?: string,
  ): Promise<TokenSessionRow[]> {
    return this.revokeSessionsWhere(membershipId, { revokedBy, revokeReason: reason }, (table, sessionId) => [
      eq(table.userId, userId),
      exceptSessionId ? sql`${sessionId} <> ${exceptSessionId}` : undefined,
    ]);
  }

  /**
   * When a sign-in session opened: the time of its sign-in, which refreshing does not move.
   * Undefined for a session a device code opened (its first record's grant is `device_code`):
   * an approval by any older session made it, so its opening proves no recent sign-in.
   */
  async findSignInTime(membershipId: string, sessionId: string): Promise<Date | undefined> {
    const openedByDevice = this.database.db
      .select({ one: sql`1` })
      .from(tokenSessions)
      .where(and(eq(tokenSessions.id, sessions.id), eq(tokenSessions.grantType, DEVICE_CODE_SESSION_GRANT)));
    const [row] = await this.database.db
      .select({ createdAt: sessions.createdAt })
      .from(sessions)
      .where(and(eq(sessions.membershipId, membershipId), eq(sessions.id, sessionId), notExists(openedByDevice)))
      .limit(1);
    return row?.createdAt;
  }

  /**
   * Ends the user's sign-ins still under way past their first step: pending second steps
   * (`mfa_token`s) and OpenID Provider interactions that know the user (at the second-factor form
   * or the consent page). A user-wide trigger ends them as it ends sessions: else a proof of the
   * old password, or a session just revoked, would open a new session within their lifetimes.
   */
  async endSignInsUnderWay(membershipId: string, userId: string): Promise<void> {
    await this.database.db.delete(mfaSignIns).where(and(eq(mfaSignIns.membershipId, membershipId), eq(mfaSignIns.userId, userId)));
    await this.database.db.delete(oidcInteractions).where(and(eq(oidcInteractions.membershipId, membershipId), eq(oidcInteractions.userId, userId)));
  }

  /**
   * Moves the user's approved, not yet polled device codes to denied: an approved code is a session
   * waiting to be picked up, so whatever ends all of the user's sessions ends it too (contract,
   * "Decisions of the third review"). The table belongs to device codes; this one statement lives
   * here because revocation, which every user-wide trigger calls, sits below that feature.
   */
  async denyApprovedDeviceCodes(membershipId: string, userId: string): Promise<number> {
    const denied = await this.database.db
      .update(tokenCodes)
      .set({ state: 'denied' })
      .where(and(eq(tokenCodes.membershipId, membershipId), eq(tokenCodes.approvedBy, userId), eq(tokenCodes.state, 'approved')))
      .returning({ id: tokenCodes.id });
    return denied.length;
  }

  /**
   * Marks revoked the still-active sessions of the membership that `pick` selects and every
   * still-active token record of them, sessions first: the session's own mark is what a concurrent
   * refresh cannot escape. `pick` states the selection once for both tables, given the table and
   * its column that holds the session id (a session's own id, a token record's session_id).
   */
  private async revokeSessionsWhere(
    membershipId: string,
    revocation: { revokedBy: string; revokeReason: string },
    pick: (table: RevocableColumns, sessionId: PgColumn) => (SQL | undefined)[],
  ): Promise<TokenSessionRow[]> {
    const marks = { revokedAt: new Date(), ...revocation };
    const stillActive = (table: RevocableColumns, sessionId: PgColumn) =>
      and(eq(table.membershipId, membershipId), ...pick(table, sessionId), isNull(table.revokedAt));
    await this.database.db.update(sessions).set(marks).where(stillActive(sessions, sessions.id));
    return this.database.db.update(tokenSessions).set(marks).where(stillActive(tokenSessions, tokenSessions.sessionId)).returning();
  }

  private listingScope(membershipId: string, state: SessionListingState) {
    return state === 'active'
      ? and(eq(tokenListing.membershipId, membershipId), isNull(tokenListing.revokedAt), sql`${tokenListing.expiresAt} > now()`)
      : and(eq(tokenListing.membershipId, membershipId), sql`${tokenListing.revokedAt} is not null`);
  }

  /** Active or revoked sessions of a membership with their username, for the token listings. Newest first by default. */
  listSessions(
    membershipId: string,
    state: SessionListingState,
    request: ListRequest,
    toResponse: (row: TokenListingRow) => object,
  ): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery<TokenListingRow>({
      executor: this.database.db,
      // The runner reads from one table-like source; the listing subquery is one (see token-listing.schema.ts).
      table: tokenListing as unknown as PgTable,
      // The subquery's id, for the ids a forbidden entry hides from the caller (request.hiddenIds).
      idColumn: tokenListing.id,
      scope: this.listingScope(membershipId, state) ?? sql`false`,
      schema: TOKEN_LISTING_QUERY_SCHEMA,
      request,
      defaultSort: sql`${tokenListing.createdAt} desc, ${tokenListing.id} desc`,
      toResponse,
    });
  }

  async findListedSession(membershipId: string, state: SessionListingState, sessionId: string): Promise<TokenListingRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(tokenListing)
      .where(and(this.listingScope(membershipId, state), eq(tokenListing.id, sessionId)))
      .limit(1);
    return row;
  }
}
