import { DEFAULT_MAX_CACHE_ENTRIES } from './cache';
import type { ServerSentEvent } from './event-stream';

/**
 * The event types the cache follows (`?types=` of the stream): every type the contract names for
 * invalidation (TokenRevoked, User*, Role*, Application*, UserType*, Membership*), and
 * TokenRefreshed: a refresh that rotates the pair (`revoke`, the default) ends the pair it
 * refreshed, its access token included, without a TokenRevoked. A type the service does not know
 * would be refused, so the list is explicit.
 */
export const FOLLOWED_EVENT_TYPES = [
  'TokenRevoked',
  'TokenRefreshed',
  'UserCreated',
  'UserUpdated',
  'UserDeleted',
  'UserPasswordChanged',
  'UserPasswordReset',
  'UserSignInLocked',
  'UserMfaEnabled',
  'UserMfaDisabled',
  'UserMfaRecoveryCodeUsed',
  'UserTypeCreated',
  'UserTypeUpdated',
  'UserTypeDeleted',
  'RoleCreated',
  'RoleUpdated',
  'RoleDeleted',
  'ApplicationCreated',
  'ApplicationUpdated',
  'ApplicationDeleted',
  // A new name or slug (the tokens' iss and aud) or a rotated key makes every earlier token invalid.
  'MembershipUpdated',
  'MembershipSecretKeyRotated',
] as const;

interface Entry<V> {
  value: V;
  expiresAt: number;
  /** The identity the answer is about (user or application id): what User* and TokenRevoked events name. */
  subjectId: string;
}

/**
 * Answers kept while the event stream is connected (settings `CacheTTL`, `StreamCredentials`).
 * Keys are digests of the Authorization header (never the token itself), each entry lives until
 * the earlier of its TTL and the token's `exp`, and at most `maxEntries` are kept (the oldest
 * stored goes first). An event drops what it may have made stale:
 * - `TokenRevoked`: the entries of its `user_id` (the service's `/whoami` does not name a
 *   session, so every token of that user is asked again; a superset of the session's);
 * - `TokenRefreshed`: the entries of its user (`document.user._id`), the same superset of the
 *   refreshed pair's (the event does not say whether the pair was rotated; when it was not,
 *   the user's next request asks once more);
 * - any `User*`: the entries of the user (`document._id`);
 * - `Role*`, `Application*`, `UserType*`, `Membership*`: everything.
 *
 * `generation` moves with every drop and every connect or loss of the stream: an answer fetched
 * while it moved may predate the change and is not stored (`set` with the generation it began at).
 */
export class StreamCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly bySubject = new Map<string, Set<string>>();
  private generationValue = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number = DEFAULT_MAX_CACHE_ENTRIES,
    private readonly now: () => number = Date.now,
  ) {}

  get generation(): number {
    return this.generationValue;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /**
   * Stores an answer fetched since `generation`, about `subjectId`, of a token expiring at
   * `tokenExpiresAt` (ms; undefined: unknown, and then not stored). Returns whether it was stored.
   */
  set(key: string, value: V, subjectId: string, generation: number, tokenExpiresAt: number | undefined): boolean {
    if (generation !== this.generationValue || tokenExpiresAt === undefined) return false;
    const expiresAt = Math.min(this.now() + this.ttlMs, tokenExpiresAt);
    if (expiresAt <= this.now()) return false;
    this.delete(key);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt, subjectId });
    let keys = this.bySubject.get(subjectId);
    if (!keys) this.bySubject.set(subjectId, (keys = new Set()));
    keys.add(key);
    return true;
  }

  /** Drops everything (the stream connected, was lost, or an event changes every answer). */
  clear(): void {
    this.generationValue++;
    this.entries.clear();
    this.bySubject.clear();
  }

  dropSubject(subjectId: string): void {
    this.generationValue++;
    for (const key of this.bySubject.get(subjectId) ?? []) this.entries.delete(key);
    this.bySubject.delete(subjectId);
  }

  /** Applies one event of the stream. */
  apply(event: ServerSentEvent): void {
    const type = event.event;
    if (dropsEveryAnswer(type)) return this.clear();
    const paths = SUBJECT_PATHS.get(type) ?? (type.startsWith('User') ? USER_EVENT_SUBJECT : undefined);
    if (paths) {
      const subject = subjectOf(event.data, paths);
      // An event whose subject cannot be read drops everything rather than nothing.
      return subject === undefined ? this.clear() : this.dropSubject(subject);
    }
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    const keys = this.bySubject.get(entry.subjectId);
    keys?.delete(key);
    if (keys && !keys.size) this.bySubject.delete(entry.subjectId);
  }
}

/**
 * Whether an event of this type may change any answer, whoever it is about: a role, an
 * application (a Basic caller: a new secret, a new role), a user type, the membership.
 */
export function dropsEveryAnswer(eventType: string): boolean {
  return ['Role', 'Application', 'UserType', 'Membership'].some((prefix) => eventType.startsWith(prefix));
}

/** Where an event names the user whose answers it drops: paths into the event, the first found wins. */
type SubjectPaths = readonly (readonly string[])[];

// A deletion's document is empty: the deleted user is the prior one.
const USER_EVENT_SUBJECT: SubjectPaths = [
  ['document', '_id'],
  ['prior', '_id'],
];
const SUBJECT_PATHS: ReadonlyMap<string, SubjectPaths> = new Map([
  ['TokenRevoked', [['document', 'user_id']]],
  ['TokenRefreshed', [['document', 'user', '_id']]],
]);

function subjectOf(data: string, paths: SubjectPaths): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  for (const path of paths) {
    let value = parsed;
    for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
    if (typeof value === 'string') return value;
  }
  return undefined;
}

/**
 * The `exp` of a JWT access token, in ms, read only to shorten a cache entry's life (the service
 * has verified the token; a forged `exp` could only make the entry live less than CacheTTL).
 * Undefined when there is none to read: such a token's answers are not cached.
 */
export function tokenExpiry(authorization: string): number | undefined {
  const token = /^bearer +(.+)$/i.exec(authorization)?.[1];
  const payload = token?.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const exp = typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>)['exp'] : undefined;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}
