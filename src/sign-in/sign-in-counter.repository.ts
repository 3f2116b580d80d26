import { Inject, Injectable } from '@nestjs/common';
import { and, eq, getTableColumns, type Placeholder, type SQL, sql } from 'drizzle-orm';
import { DATABASE, type Database, prepareRows, UNFLUSHED_COMMIT } from '../database/database';
import { signInCounters, users, type UserRecord } from '../database/schema';
import { DEFAULT_SIGN_IN_POLICY } from '../memberships/sign-in-policy';

/** The longest lock, seconds (contract: doubling "up to 86400 s"). */
export const MAX_LOCK_SECONDS = 86_400;
/** How long past the end of its last lock a login remembers it, so the next lock doubles. */
const LOCK_MEMORY_SECONDS = 86_400;

const p = (name: string) => sql.placeholder(name);

/** The membership's sign_in_policy as one row (max_failures, window_seconds, lock_seconds), defaults for fields never set. */
const policy = sql`select coalesce((sign_in_policy->>'max_failures')::int, ${DEFAULT_SIGN_IN_POLICY.max_failures}) as max_failures,
         coalesce((sign_in_policy->>'window_seconds')::int, ${DEFAULT_SIGN_IN_POLICY.window_seconds}) as window_seconds,
         coalesce((sign_in_policy->>'lock_seconds')::int, ${DEFAULT_SIGN_IN_POLICY.lock_seconds}) as lock_seconds
  from memberships where id = ${p('membershipId')}::text`;

/**
 * Counts one more of the counter `key` (not of a membership: a client address's) within its fixed
 * window of `windowSeconds`, which starts again with the first count after it ended. The row is
 * `c` for the caller's `returning`. `source` (a FROM and WHERE) counts only when it has a row.
 */
const countInWindow = (key: Placeholder, windowSeconds: Placeholder, source: SQL = sql``): SQL => sql`insert into sign_in_counters as c (id, membership_id, failures, window_ends_at, lock_level, expires_at)
    select ${key}::text, null, 1, now() + make_interval(secs => ${windowSeconds}::int),
           0, now() + make_interval(secs => ${windowSeconds}::int)
    ${source}
    on conflict (id) do update set
      failures = case when c.window_ends_at <= now() then 1 else c.failures + 1 end,
      window_ends_at = case when c.window_ends_at <= now() then excluded.window_ends_at else c.window_ends_at end,
      expires_at = greatest(c.expires_at, excluded.expires_at)`;

/**
 * Counts an attempt of the login unless the address is locked; nothing is counted while the login
 * itself is locked. A row outlives its success (see `reset`), so most attempts update it in place.
 * Its expiry moves only when its window starts again, and then a day further than needed: the
 * indexed `expires_at` then stays put from one attempt to the next, and the update needs no new
 * index entry (a HOT update).
 *
 * An attempt the login lets through is counted by the address too, before its secret is checked,
 * as a failure until its end says otherwise (`reset` and `release` give it back): attempts in
 * flight count, so parallel guesses spread over many logins cannot pass the address's limit
 * before the first of them has failed. `address_failures` past the limit tells the caller that
 * parallel attempts took the last places first (the snapshot `address_lock` read did not see them).
 */
const reserveStatement = sql`with policy as (${policy}), address_lock as (
    select window_ends_at from sign_in_counters
    where id = ${p('addressKey')}::text and window_ends_at > now() and failures >= ${p('addressMaxFailures')}::int
  ), reserved as (
    insert into sign_in_counters as c (id, membership_id, failures, window_ends_at, lock_level, expires_at)
    select ${p('loginKey')}::text, ${p('membershipId')}::text, 1, now() + make_interval(secs => p.window_seconds), 0,
           now() + make_interval(secs => p.window_seconds) + interval '1 day'
    from policy p where not exists (select 1 from address_lock)
    on conflict (id) do update set
      failures = case when c.locked_until > now() then c.failures when c.window_ends_at <= now() then 1 else c.failures + 1 end,
      window_ends_at = case when c.locked_until > now() or c.window_ends_at > now() then c.window_ends_at else excluded.window_ends_at end,
      expires_at = case when c.locked_until > now() or c.window_ends_at > now() or c.expires_at >= excluded.window_ends_at
                        then c.expires_at else excluded.expires_at end
    returning c.failures, c.locked_until
  ), address as (
    ${countInWindow(p('addressKey'), p('addressWindowSeconds'), sql`from reserved r, policy p
      where (r.locked_until is null or r.locked_until <= now()) and r.failures <= p.max_failures`)}
    returning c.failures, c.window_ends_at
  )
  select r.failures, p.max_failures,
         greatest(0, extract(epoch from (r.locked_until - now()))) as login_lock_left,
         greatest(0, extract(epoch from ((select window_ends_at from address_lock) - now()))) as address_lock_left,
         a.failures as address_failures,
         greatest(0, extract(epoch from (a.window_ends_at - now()))) as address_window_left
  from policy p left join reserved r on true left join address a on true
  where ${UNFLUSHED_COMMIT}`;

/**
 * A failure: the login (whose attempt `reserve` counted already, as it did for the address) is
 * locked when its count has reached the policy's limit and no lock holds yet.
 */
const failureStatement = sql`with policy as (${policy}), counted as (
    select failures from sign_in_counters where id = ${p('loginKey')}::text
  ), locked as (
    update sign_in_counters c set
      locked_until = now() + make_interval(secs => least(${MAX_LOCK_SECONDS}, p.lock_seconds * power(2, least(c.lock_level, 20)))),
      lock_level = c.lock_level + 1,
      failures = 0,
      expires_at = greatest(c.expires_at,
        now() + make_interval(secs => least(${MAX_LOCK_SECONDS}, p.lock_seconds * power(2, least(c.lock_level, 20))) + ${LOCK_MEMORY_SECONDS}))
    from policy p
    where c.id = ${p('loginKey')}::text and c.failures >= p.max_failures and (c.locked_until is null or c.locked_until <= now())
    returning c.lock_level, c.locked_until
  )
  select l.lock_level, l.locked_until, coalesce((select failures from counted), 0) as failures
  from locked l
  where ${UNFLUSHED_COMMIT}`;

/**
 * The place `reserve` took for an attempt in the address's count, given back: the attempt was no
 * failure. Only within the window it was counted in (a new window counts other attempts); a null
 * key gives back nothing (the attempt's address was settled before).
 */
const addressRelease = sql`update sign_in_counters set failures = greatest(failures - 1, 0)
    where id = ${p('addressKey')}::text and window_ends_at > now()`;

/**
 * A success: the count and the doubling start over. The row stays (the next attempt updates it
 * instead of inserting it again and checking its membership's foreign key); its window ends now,
 * so the next attempt opens a new one, as for a login never seen. The address gives the attempt's
 * place back (only failures stay counted there).
 */
const resetStatement = sql`with address as (${addressRelease}), login as (
    update sign_in_counters set failures = 0, lock_level = 0, locked_until = null, window_ends_at = now()
    where id = ${p('loginKey')}::text and membership_id = ${p('membershipId')}::text
  )
  select 1 where ${UNFLUSHED_COMMIT}`;

/**
 * An attempt that was neither a wrong guess nor a proof (a device user code that names a code):
 * the count `reserve` added for it is taken back, and the failures before it stay. Nothing moves
 * while a lock holds (reserve counted nothing then). The address gives its place back too.
 */
const releaseStatement = sql`with address as (${addressRelease}), login as (
    update sign_in_counters set failures = greatest(failures - 1, 0)
    where id = ${p('loginKey')}::text and membership_id = ${p('membershipId')}::text
      and (locked_until is null or locked_until <= now())
  )
  select 1 where ${UNFLUSHED_COMMIT}`;

/** An attempt whose secret was right while its sign-in goes on (a second step is due): the address alone gives its place back. */
const addressReleaseStatement = sql`with address as (${addressRelease}) select 1 where ${UNFLUSHED_COMMIT}`;

/**
 * One request of a rate-limited kind from one key (a client address): counted within a fixed
 * window that starts with the first request after the last window ended.
 */
const requestStatement = sql`with counted as (
    ${countInWindow(p('key'), p('windowSeconds'))}
    returning c.failures, c.window_ends_at
  )
  select failures, greatest(0, extract(epoch from (window_ends_at - now()))) as window_left
  from counted
  where ${UNFLUSHED_COMMIT}`;

/** What counting an attempt found: the login's count with this attempt, and the locks in force. */
export interface ReservedAttempt {
  failures: number;
  maxFailures: number;
  /** Seconds left of the login's lock; 0 when none holds. */
  loginLockLeft: number;
  /** Seconds left until the address's window ends, when its failures have reached the limit; else 0. */
  addressLockLeft: number;
  /** The address's count with this attempt (failures and attempts in flight); 0 when the address did not count it. */
  addressFailures: number;
  /** Seconds left of the address's window. */
  addressWindowLeft: number;
}

/** A lock this failure set. */
export interface NewLock {
  /** Locks since the last success, this one included (1: the first). */
  level: number;
  failures: number;
  lockedUntil: Date;
}

export interface AddressLimit {
  maxFailures: number;
  windowSeconds: number;
}

/**
 * Sign-in failure counts and locks (table sign_in_counters), one row per login or client address.
 * The membership's `sign_in_policy` is read by the counting statements themselves, so no instance
 * can act on a stale copy of it. Every statement is single and atomic: parallel attempts are
 * serialised by the row, never by a read followed by a write.
 *
 * The counting statements commit without waiting for a disk flush (UNFLUSHED_COMMIT): every
 * instance sees a count at once, and a crash of the database server may forget the last fraction
 * of a second of counts. A sign-in then waits for one flush (its new session), not three.
 */
@Injectable()
export class SignInCounterRepository {
  private readonly reserveRows;
  private readonly failureRows;
  private readonly resetRows;
  private readonly releaseRows;
  private readonly addressReleaseRows;
  private readonly requestRows;

  constructor(@Inject(DATABASE) private readonly database: Database) {
    const db = database.db;
    this.reserveRows = prepareRows<{
      failures: number | null;
      max_failures: number;
      login_lock_left: string | null;
      address_lock_left: string | null;
      address_failures: number | null;
      address_window_left: string | null;
    }>(
      db,
      'sign_in_reserve',
      reserveStatement,
    );
    this.failureRows = prepareRows<{ lock_level: number; failures: number; locked_until: string | Date }>(db, 'sign_in_failure', failureStatement);
    this.resetRows = prepareRows<never>(db, 'sign_in_reset', resetStatement);
    this.releaseRows = prepareRows<never>(db, 'sign_in_release', releaseStatement);
    this.addressReleaseRows = prepareRows<never>(db, 'sign_in_address_release', addressReleaseStatement);
    this.requestRows = prepareRows<{ failures: number; window_left: string }>(db, 'rate_limited_request', requestStatement);
  }

  /**
   * Counts an attempt of the login, and of the address when the login lets it through, before
   * its secret is checked (so attempts in flight count), unless the address is locked; nothing is
   * counted while the login itself is locked. Undefined when the membership does not exist.
   */
  async reserve(membershipId: string, loginKey: string, addressKey: string, address: AddressLimit): Promise<ReservedAttempt | undefined> {
    const [row] = await this.reserveRows({
      membershipId,
      loginKey,
      addressKey,
      addressMaxFailures: address.maxFailures,
      addressWindowSeconds: address.windowSeconds,
    });
    if (!row) return undefined;
    return {
      failures: row.failures ?? 0,
      maxFailures: row.max_failures,
      loginLockLeft: Number(row.login_lock_left ?? 0),
      addressLockLeft: Number(row.address_lock_left ?? 0),
      addressFailures: row.address_failures ?? 0,
      addressWindowLeft: Number(row.address_window_left ?? 0),
    };
  }

  /**
   * A failure: the login (whose attempt `reserve` counted already, as the address did) is locked
   * when its count has reached the policy's limit and no lock holds yet. One statement. The new
   * lock, when this failure set one.
   */
  async recordFailure(membershipId: string, loginKey: string): Promise<NewLock | undefined> {
    const [row] = await this.failureRows({ membershipId, loginKey });
    if (!row) return undefined;
    return { level: row.lock_level, failures: row.failures, lockedUntil: new Date(row.locked_until) };
  }

  /**
   * A success: the login's count, lock and doubling start over, and the address (unless
   * `addressKey` is null: given back before) gives back the place `reserve` took (resetStatement).
   */
  async reset(membershipId: string, loginKey: string, addressKey: string | null): Promise<void> {
    await this.resetRows({ membershipId, loginKey, addressKey });
  }

  /**
   * An attempt that proved nothing either way: the login's count loses the one `reserve` added,
   * and so does the address's unless `addressKey` is null (releaseStatement).
   */
  async release(membershipId: string, loginKey: string, addressKey: string | null): Promise<void> {
    await this.releaseRows({ membershipId, loginKey, addressKey });
  }

  /** The address alone gives back the place `reserve` took for an attempt (addressReleaseStatement). */
  async releaseAddress(addressKey: string): Promise<void> {
    await this.addressReleaseRows({ addressKey });
  }

  /** Counts one request of `key` within its window (requestStatement): the count so far, this one included, and the seconds left of the window. */
  async countRequest(key: string, windowSeconds: number): Promise<{ count: number; windowLeft: number }> {
    const [row] = await this.requestRows({ key, windowSeconds });
    return { count: row.failures, windowLeft: Number(row.window_left) };
  }

  /** An unlock or a password set by reset: the login's count, lock and doubling are forgotten. */
  async clear(membershipId: string, loginKey: string): Promise<void> {
    await this.database.db.delete(signInCounters).where(and(eq(signInCounters.membershipId, membershipId), eq(signInCounters.id, loginKey)));
  }

  /** The user a lock event describes (without its password hash). */
  async findUser(membershipId: string, userId: string): Promise<UserRecord | undefined> {
    const { passwordHash: _hash, ...columns } = getTableColumns(users);
    const [row] = await this.database.db
      .select(columns)
      .from(users)
      .where(and(eq(users.membershipId, membershipId), eq(users.id, userId)))
      .limit(1);
    return row;
  }
}
