import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { permissionRequirement } from '../common/access-decorators';
import { ACCESS_RECHECK, type AccessRecheck } from '../common/access-recheck';
import type { Caller } from '../common/caller';
import { DomainError, RetryLaterError, validationError } from '../common/errors';
import { isPossibleId } from '../common/ids';
import { LOGGER } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { EventRow } from '../database/schema';
import { CallerPermissions } from '../roles/caller-permissions';
import { toEventResponse } from '../events/event.mapper';
import { CachedSettings, changesCachedSettings } from './cached-settings';
import { EventStreamRepository, type StreamCursor } from './event-stream.repository';
import { EventWakeups } from './event-wakeups';
import { isEventType } from '../events/event-types';

/** What reading the stream takes (its route requires it; the stream asks again once its start is fixed). */
export const STREAM_PERMISSION = 'events.read';
const STREAM_REQUIREMENT = permissionRequirement(STREAM_PERMISSION);
/** Safety net: each stream reads again this often even when nothing woke it (a lost notification). */
const POLL_MS = 1_000;
/** Events of a transaction that committed out of order wait for older ones; look again this soon. */
const HELD_BACK_RETRY_MS = 50;
/** Events per read; a stream behind by more reads again at once. */
const READ_BATCH = 500;
/** A comment line this often keeps proxies and clients from closing an idle stream (contract: 15 s). */
export const KEEP_ALIVE_MS = 15_000;
/**
 * `?keep_alive=<seconds>` may ask for a comment this often instead, so that a client can tell a
 * silently cut connection from an idle one within a few seconds (the client library asks for 1 s:
 * its cache must stop serving soon after the stream is lost). Whole seconds, at least one: what a
 * client can make a stream write stays bounded (15 bytes a second); never more than the default.
 */
export const KEEP_ALIVE_SECONDS_RANGE = { min: 1, max: KEEP_ALIVE_MS / 1000 } as const;
/** Events that may end a stream's credential or change its access: read even when `types` leaves them out. */
const CREDENTIAL_EVENT_TYPES = [
  'TokenRevoked',
  'ApplicationUpdated',
  'ApplicationDeleted',
  'UserUpdated',
  'UserDeleted',
  // A role may be deleted while held: a new role under that slug gives its holders its lists.
  'RoleCreated',
  'RoleUpdated',
  'RoleDeleted',
  'MembershipUpdated',
  'MembershipSecretKeyRotated',
];
/**
 * Read as well by a Bearer stream alone: a refresh that rotates the pair (revoke, the default)
 * ends the access token it refreshed, with no TokenRevoked. Refreshes are frequent, and no Basic
 * stream's credential depends on one.
 */
const BEARER_CREDENTIAL_EVENT_TYPES = [...CREDENTIAL_EVENT_TYPES, 'TokenRefreshed'];
/** Settings events remembered as already dropped (see EventStreams.beforeSending); forgetting one only costs a second drop. */
const MAX_REMEMBERED_DROPS = 1_000;
/** Longest `?types=` value considered. */
const MAX_TYPES_LENGTH = 4_096;
const CURSOR_PATTERN = /^(\d{1,20})\.(.+)$/;
const MAX_XID8 = 2n ** 64n - 1n;

/** Where a stream writes; the controller builds it over the HTTP response. */
export interface StreamSink {
  /** The SSE text; false when the connection's buffer is full (wait for `drained`). */
  write(text: string): boolean;
  /** Whether text written earlier still waits for the client to read it (the buffer is full). */
  backedUp(): boolean;
  drained(): Promise<void>;
  end(): void;
  /** Called once when the client goes away. */
  onClose(listener: () => void): void;
}

/** Where a request asks to resume: a cursor or an event id, and the field it came in (named by a 400). */
interface ResumePoint {
  at: StreamCursor | string;
  field: 'Last-Event-ID' | 'after';
}

export interface StreamRequest {
  /** `?types=A,B`. */
  types?: unknown;
  /** `?after=<cursor>`. */
  after?: unknown;
  /** The `Last-Event-ID` header; it wins over `after` (a browser sends it on reconnect). */
  lastEventId?: unknown;
  /** `?keep_alive=<seconds>`: how often an idle stream writes a comment (KEEP_ALIVE_SECONDS_RANGE). */
  keepAlive?: unknown;
}

/** What a stream tells the hub. */
interface StreamHooks {
  /** Called once when the stream ends. */
  onClosed: () => void;
  /** Each event read, before it is written. */
  onRead: (row: EventRow) => void;
  /** Whether the credential the stream was opened with still holds, judged as the guard judges it now. */
  credentialHolds: () => Promise<boolean>;
}

/** An open stream, as the hub sees it. */
interface OpenStream {
  wake(): void;
  close(): void;
}

/**
 * The live event stream (contract "Live event stream"): one EventStream per open connection,
 * registered here per membership. Streams are woken when events commit (EventWakeups: this
 * instance's own commits, and the other instances' NOTIFY on a PostgreSQL server); each also
 * reads again every POLL_MS in case a notification was lost. What a stream reads is decided by
 * the database's commit order alone (EventStreamRepository), so a wake-up only ever says "look now".
 */
@Injectable()
export class EventStreams implements OnModuleInit, OnModuleDestroy {
  private readonly open = new Map<string, Set<OpenStream>>();
  private stopping = false;
  /** Ids of settings events whose caches the streams dropped lately: each stream reads them, one drop does. */
  private readonly settingsDropped = new Set<string>();

  constructor(
    private readonly repository: EventStreamRepository,
    private readonly permissions: CallerPermissions,
    private readonly wakeups: EventWakeups,
    private readonly cachedSettings: CachedSettings,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(ACCESS_RECHECK) private readonly access: AccessRecheck,
  ) {}

  onModuleInit(): void {
    this.wakeups.deliverTo({
      wake: (membershipId) => this.wake(membershipId),
      wakeAll: () => this.wakeAll(),
      end: (membershipId) => this.end(membershipId),
    });
  }

  /** Open streams of a membership on this instance. */
  count(membershipId: string): number {
    return this.open.get(membershipId)?.size ?? 0;
  }

  /**
   * Opens a stream for the credential in `authorization`, which the guard let through and which
   * is judged again once the start is fixed (AccessRecheck): validates the request (400), counts
   * it against the membership's limit (429 TooManyStreams), then writes events to `sink` until the
   * client goes away, the caller's credential is revoked or rotated, or the service stops.
   */
  async openStream(authorization: unknown, membershipId: string, request: StreamRequest, sink: StreamSink): Promise<void> {
    if (this.stopping) throw new DomainError('AuthenticationServiceUnavailable', 'The service is stopping');
    const types = parseTypes(request.types);
    const keepAliveMs = parseKeepAliveMs(request.keepAlive);
    const resumeFrom = parseCursorText(request.lastEventId, 'Last-Event-ID') ?? parseCursorText(request.after, 'after');
    const streams = this.open.get(membershipId) ?? new Set<OpenStream>();
    if (streams.size >= this.config.eventStreamsPerMembership) {
      throw new RetryLaterError('TooManyStreams', `At most ${this.config.eventStreamsPerMembership} event streams of a membership may be open at once`, 5);
    }
    // Counted before any await, so that concurrent opens cannot pass the limit together.
    const placeholder: OpenStream = { wake: () => undefined, close: () => undefined };
    streams.add(placeholder);
    this.open.set(membershipId, streams);
    let stream: EventStream | undefined;
    try {
      await this.wakeups.listen();
      const cursor = await this.resolveCursor(membershipId, resumeFrom);
      // The guard judged the credential before this start was fixed: a revocation, a rotated
      // secret, a role change or a deleted membership committed in between would come before
      // the start, never to be read. Judged again now, anything later is read (and ends the stream).
      const caller = await this.access.recheck(authorization, membershipId, STREAM_REQUIREMENT);
      const hidden = new Set(await this.permissions.hiddenFromLists(caller, 'events'));
      stream = new EventStream(caller, membershipId, cursor, types, hidden, keepAliveMs, sink, this.repository, this.logger, {
        onClosed: () => this.forget(membershipId, stream),
        onRead: (row) => this.beforeSending(row),
        // Any failure counts as an ended credential: the client reconnects and is judged anew.
        credentialHolds: () =>
          this.access.recheck(authorization, membershipId, STREAM_REQUIREMENT).then(
            () => true,
            () => false,
          ),
      });
    } finally {
      streams.delete(placeholder);
      if (!streams.size) this.open.delete(membershipId);
    }
    if (this.stopping) throw new DomainError('AuthenticationServiceUnavailable', 'The service is stopping');
    streams.add(stream);
    this.open.set(membershipId, streams);
    stream.start();
  }

  /** Ends every open stream at once, so that none holds a graceful stop up (called first on SIGTERM, and by Nest on close). */
  closeAll(): void {
    this.stopping = true;
    this.wakeups.stop();
    for (const streams of [...this.open.values()]) for (const stream of [...streams]) stream.close();
    this.open.clear();
  }

  onModuleDestroy(): void {
    this.closeAll();
  }

  private forget(membershipId: string, stream: OpenStream | undefined): void {
    const streams = this.open.get(membershipId);
    if (!streams || !stream) return;
    streams.delete(stream);
    if (!streams.size) this.open.delete(membershipId);
  }

  /**
   * Both forms name an event of the membership: an event id (as GET .../events shows it), or a
   * cursor, which is the `(commit_xid, id)` of an event this stream sent. A cursor is checked
   * against that event too, not only read: one that names no event, or an xid other than the
   * event's (a forged or future position), would otherwise skip silently every event before that
   * position, where the contract promises none is skipped.
   */
  private async resolveCursor(membershipId: string, resumeFrom: ResumePoint | undefined): Promise<StreamCursor> {
    if (resumeFrom === undefined) return this.repository.start();
    const { at, field } = resumeFrom;
    const cursor = await this.repository.cursorOfEvent(membershipId, typeof at === 'string' ? at : at.id);
    if (!cursor) throw validationError(field, 'names no event of this membership');
    if (typeof at !== 'string' && at.xid !== cursor.xid) throw validationError(field, 'is not the position of the event it names');
    return cursor;
  }

  /**
   * A Role*, UserType* or Membership* event about to be sent: this instance drops its cached
   * settings of the membership first. A client drops its own cache on the event and asks this
   * instance again; were the change another instance's, whose NOTIFY may come after this stream
   * read the event (its poll), the answer would come from the older copy and be kept anew.
   */
  private beforeSending(row: EventRow): void {
    if (!changesCachedSettings(row.eventType) || this.settingsDropped.has(row.id)) return;
    if (this.settingsDropped.size >= MAX_REMEMBERED_DROPS) this.settingsDropped.clear();
    this.settingsDropped.add(row.id);
    this.cachedSettings.forgetMembership(row.membershipId);
  }

  private wake(membershipId: string): void {
    for (const stream of this.open.get(membershipId) ?? []) stream.wake();
  }

  /** Ends every open stream of a membership (it was deleted, with every credential of it). */
  private end(membershipId: string): void {
    for (const stream of [...(this.open.get(membershipId) ?? [])]) stream.close();
  }

  private wakeAll(): void {
    for (const streams of this.open.values()) for (const stream of streams) stream.wake();
  }
}

/** One open connection: reads after its cursor when woken, writes what the caller may see. */
class EventStream implements OpenStream {
  private reading = false;
  private again = false;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private retry: NodeJS.Timeout | undefined;
  /** The SQL filter: the asked types, and those that may end the credential. */
  private readonly readTypes: readonly string[] | undefined;

  constructor(
    private readonly caller: Caller,
    private readonly membershipId: string,
    private cursor: StreamCursor,
    private readonly types: ReadonlySet<string> | undefined,
    private readonly hidden: ReadonlySet<string>,
    private readonly keepAliveMs: number,
    private readonly sink: StreamSink,
    private readonly repository: EventStreamRepository,
    private readonly logger: Logger,
    private readonly hooks: StreamHooks,
  ) {
    const credentialTypes = caller.kind === 'user' ? BEARER_CREDENTIAL_EVENT_TYPES : CREDENTIAL_EVENT_TYPES;
    this.readTypes = types ? [...new Set([...types, ...credentialTypes])] : undefined;
  }

  start(): void {
    this.sink.onClose(() => this.close());
    // retry: how long a client waits before reconnecting (EventSource honours it).
    this.sink.write(': connected\nretry: 1000\n\n');
    // Not while earlier text waits for the client: that is no idle stream, and a reader that never
    // reads would otherwise have a comment buffered for it each period without end.
    this.timers.push(
      setInterval(() => {
        if (!this.sink.backedUp()) this.sink.write(': keep-alive\n\n');
      }, this.keepAliveMs),
    );
    this.timers.push(setInterval(() => this.wake(), POLL_MS));
    if (this.caller.kind === 'user') {
      // A Bearer token's stream ends when the token does.
      const left = this.caller.tokenExpiresAt * 1000 - Date.now();
      this.timers.push(setTimeout(() => this.close(), Math.max(0, Math.min(left, 2_147_483_647))));
    }
    this.wake();
  }

  wake(): void {
    if (this.closed) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    void this.pump();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    clearTimeout(this.retry);
    this.sink.end();
    this.hooks.onClosed();
  }

  private async pump(): Promise<void> {
    this.reading = true;
    try {
      do {
        this.again = false;
        const read = await this.repository.readAfter(this.membershipId, this.cursor, READ_BATCH, this.readTypes);
        if (this.closed) return;
        for (const { row, cursor } of read.events) {
          this.cursor = cursor;
          this.hooks.onRead(row);
          if (this.visible(row) && !this.sink.write(frame(cursor, row))) await this.sink.drained();
          if (this.endsCredential(row)) return this.close();
          if (this.mayEndCredential(row) && !(await this.hooks.credentialHolds())) return this.close();
          if (this.closed) return;
        }
        if (read.full) this.again = true;
        if (read.heldBack) {
          clearTimeout(this.retry);
          this.retry = setTimeout(() => this.wake(), HELD_BACK_RETRY_MS);
        }
      } while (this.again && !this.closed);
    } catch (error) {
      // A failed read (database restarting) is tried again by the poll; the stream stays open.
      this.logger.warn({ err: error, membershipId: this.membershipId }, 'event stream: read failed');
    } finally {
      this.reading = false;
    }
  }

  private visible(row: EventRow): boolean {
    return (!this.types || this.types.has(row.eventType)) && !this.hidden.has(row.id);
  }

  /**
   * A revoked session (Bearer); the membership's signing key rotated, or its name or slug (the
   * tokens' `iss` and `aud`) changed, which makes every earlier Bearer token of it InvalidToken;
   * the application updated (its secret may be rotated, it may be inactive) or deleted (Basic,
   * whose credential the membership's key does not sign); and, for both, the caller itself or
   * its role changed or deleted, since `events.read` and the forbidden entries may have changed
   * with them. A role created under the caller's role slug counts as its role changed: a role
   * can be deleted while users or applications still name it, and a new one with that slug gives
   * them its permissions and forbidden entries (it may forbid `events`). The client reconnects with Last-Event-ID, and the new stream is judged on what
   * holds then.
   */
  private endsCredential(row: EventRow): boolean {
    const type = row.eventType;
    // A deletion's document is empty; what was deleted is the prior one.
    const subject = (type.endsWith('Deleted') ? row.prior : row.document) ?? {};
    if ((type === 'RoleCreated' || type === 'RoleUpdated' || type === 'RoleDeleted') && this.caller.roleSlug !== null) {
      if (subject['slug'] === this.caller.roleSlug || row.prior?.['slug'] === this.caller.roleSlug) return true;
    }
    if (this.caller.kind === 'user') {
      if (type === 'MembershipSecretKeyRotated') return true;
      if (type === 'MembershipUpdated') return changesTokenClaims(row);
      if (type === 'TokenRevoked') return row.document['session_id'] === this.caller.sessionId || row.document['token_id'] === this.caller.tokenId;
      return (type === 'UserUpdated' || type === 'UserDeleted') && subject['_id'] === this.caller.id;
    }
    return (type === 'ApplicationUpdated' || type === 'ApplicationDeleted') && subject['_id'] === this.caller.id;
  }

  /**
   * A refresh of the caller's user (Bearer): if it rotated the caller's own pair, the caller's
   * access token ended with it. The event names neither the pair it refreshed nor whether it
   * rotated it, so the credential is judged again: a refresh with revoke=false, or of another
   * session of the user, leaves the stream open.
   */
  private mayEndCredential(row: EventRow): boolean {
    if (this.caller.kind !== 'user' || row.eventType !== 'TokenRefreshed') return false;
    const user = row.document['user'];
    return typeof user === 'object' && user !== null && (user as Record<string, unknown>)['_id'] === this.caller.id;
  }
}

/** Whether a MembershipUpdated changed what every token of the membership is checked against (`iss`, `aud`). */
function changesTokenClaims(row: EventRow): boolean {
  const after = row.document;
  const before = row.prior ?? {};
  return after['name'] !== before['name'] || after['slug'] !== before['slug'];
}

/** One event in SSE: the cursor, the type, and the event as GET .../events/{id} shows it (JSON has no raw newline). */
function frame(cursor: StreamCursor, row: EventRow): string {
  return `id: ${formatCursor(cursor)}\nevent: ${row.eventType}\ndata: ${JSON.stringify(toEventResponse(row))}\n\n`;
}

export function formatCursor(cursor: StreamCursor): string {
  return `${cursor.xid}.${cursor.id}`;
}

function parseTypes(value: unknown): ReadonlySet<string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > MAX_TYPES_LENGTH) throw validationError('types', 'must be a comma-separated list of event types');
  const types = value.split(',').map((type) => type.trim());
  const unknown = types.find((type) => !isEventType(type));
  if (unknown !== undefined) throw validationError('types', `${JSON.stringify(unknown.slice(0, 64))} is not an event type`);
  return new Set(types);
}

function parseKeepAliveMs(value: unknown): number {
  if (value === undefined) return KEEP_ALIVE_MS;
  const { min, max } = KEEP_ALIVE_SECONDS_RANGE;
  const seconds = typeof value === 'string' && /^\d{1,2}$/.test(value) ? Number(value) : Number.NaN;
  if (!(seconds >= min && seconds <= max)) throw validationError('keep_alive', `must be a whole number of seconds from ${min} to ${max}`);
  return seconds * 1000;
}

/** A cursor (`<xid>.<event id>`, the xid as the database writes it) or an event id, or undefined when absent; looked up by resolveCursor. */
function parseCursorText(value: unknown, field: ResumePoint['field']): ResumePoint | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw validationError(field, 'must be a cursor of this stream or an event id');
  const match = CURSOR_PATTERN.exec(value);
  if (match) {
    const [, xid, id] = match;
    if (xid !== undefined && id !== undefined && BigInt(xid) <= MAX_XID8 && isPossibleId(id)) return { at: { xid: BigInt(xid).toString(), id }, field };
  } else if (isPossibleId(value)) {
    return { at: value, field };
  }
  throw validationError(field, 'must be a cursor of this stream or an event id');
}
