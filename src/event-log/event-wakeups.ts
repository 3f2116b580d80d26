import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { LOGGER } from '../common/logger';
import { DATABASE, type Database } from '../database/database';
import type { EventRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { CachedSettings, changesCachedSettings } from './cached-settings';
import { EventStreamRepository } from './event-stream.repository';

/** The NOTIFY channel every instance LISTENs on; the payload is a comma-separated list of membership ids. */
const CHANNEL = 'portcullis_events';
/** Commits within this window share one NOTIFY: under load, at most a few statements a second per instance. */
const NOTIFY_COALESCE_MS = 25;
/** A NOTIFY payload must stay under 8000 bytes; past this, `*` wakes every stream. */
const MAX_NOTIFY_PAYLOAD = 7_000;
/**
 * Marks the items of a payload that say "drop what you cached of this membership's settings"
 * (CachedSettings), sent in a NOTIFY of their own before the wake-up. An instance of an older
 * version splits it like a wake-up and wakes no stream with it (no membership id has a colon).
 */
const FORGET_PREFIX = 'settings:';
/**
 * Marks the items of a payload that say "this membership is deleted: end its streams" (no event
 * can say it, the event log goes with the membership). An older version wakes no stream with it.
 */
const ENDED_PREFIX = 'ended:';
/** Wait before trying a failed LISTEN again. */
const LISTEN_RETRY_MS = 5_000;

/** Whom a wake-up reaches: this instance's streams of one membership, or all of them. */
export interface WakeTarget {
  wake(membershipId: string): void;
  wakeAll(): void;
  /** The membership is gone, and with it every credential of its streams: end them. */
  end(membershipId: string): void;
}

/**
 * Says "look now" to this instance's event streams when events commit: at once for this
 * instance's own commits (EventRecorder listeners), and on a PostgreSQL server for the other
 * instances' commits, through the NOTIFY each instance sends after its own (coalesced) and a
 * LISTEN opened at start. The embedded database has one writer, this process, so it needs
 * neither. A lost notification costs a stream at most its poll.
 *
 * The same NOTIFY tells the other instances to drop their cached roles, user types and
 * membership row of a membership whose Role*, UserType* or Membership* event committed
 * (CachedSettings): within about a second, at no cost per request. A notification lost with the
 * LISTEN connection empties those caches when it is open again; one lost otherwise (the NOTIFY
 * statement failed) leaves the caches' own lifetimes as the bound (roles 5 minutes).
 */
@Injectable()
export class EventWakeups implements OnApplicationBootstrap, OnModuleDestroy {
  private target: WakeTarget | undefined;
  private listening: Promise<(() => Promise<void>) | undefined> | undefined;
  private readonly toNotify = new Set<string>();
  private readonly toForget = new Set<string>();
  private readonly toEnd = new Set<string>();
  private notifyTimer: NodeJS.Timeout | undefined;
  private listenRetry: NodeJS.Timeout | undefined;
  /** A LISTEN failed: whatever was notified meanwhile went unheard. */
  private unheard = false;
  private stopped = false;

  constructor(
    private readonly recorder: EventRecorder,
    private readonly repository: EventStreamRepository,
    private readonly cachedSettings: CachedSettings,
    @Inject(DATABASE) private readonly database: Database,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** LISTEN from the start (not with the first stream): the caches need it even when no stream is open. */
  async onApplicationBootstrap(): Promise<void> {
    await this.listen();
  }

  /** Wake-ups go to `target` from now on; called once, by the streams' hub at start. */
  deliverTo(target: WakeTarget): void {
    this.target = target;
    this.recorder.onCommitted((events) => this.committed(events));
  }

  /**
   * On a server, LISTEN (at start, and again by each stream while it is down); resolves once
   * listening, or once it failed: streams still poll, and it is tried again in LISTEN_RETRY_MS.
   */
  listen(): Promise<unknown> {
    const listen = this.database.listen;
    if (!listen || this.stopped) return Promise.resolve();
    this.listening ??= listen(CHANNEL, (payload) => this.notified(payload), () => this.missedNotifications()).then(
      (unlisten) => {
        if (this.unheard) this.missedNotifications();
        this.unheard = false;
        return unlisten;
      },
      (error: unknown) => {
        this.logger.warn({ err: error }, 'event streams: LISTEN failed; streams poll and other instances\' changes wait for the cache lifetimes until it works');
        this.listening = undefined;
        this.unheard = true;
        if (!this.stopped) {
          this.listenRetry ??= setTimeout(() => {
            this.listenRetry = undefined;
            void this.listen();
          }, LISTEN_RETRY_MS);
        }
        return undefined;
      },
    );
    return this.listening;
  }

  /** No NOTIFY from here on: the instance is stopping. */
  stop(): void {
    this.stopped = true;
  }

  async onModuleDestroy(): Promise<void> {
    this.stop();
    clearTimeout(this.notifyTimer);
    clearTimeout(this.listenRetry);
    const unlisten = await this.listening?.catch(() => undefined);
    await unlisten?.();
  }

  private committed(events: readonly EventRow[]): void {
    const memberships = new Set(events.map((event) => event.membershipId));
    for (const membershipId of memberships) this.target?.wake(membershipId);
    if (!this.notifiesOthers()) return;
    for (const membershipId of memberships) this.toNotify.add(membershipId);
    for (const event of events) if (changesCachedSettings(event.eventType)) this.toForget.add(event.membershipId);
    this.scheduleNotify();
  }

  /**
   * Tells the other instances to drop what they cached of a membership whose settings changed
   * with no event to carry the news: a deleted membership takes its event log with it, so no
   * Membership* event commits, and without this the others would serve the deleted row for the
   * whole cache lifetime (an hour). Called after the commit.
   */
  settingsChanged(membershipId: string): void {
    if (!this.notifiesOthers()) return;
    this.toForget.add(membershipId);
    this.scheduleNotify();
  }

  /**
   * A deleted membership: its streams end on every instance. Their credentials went with it (an
   * application is deleted with its membership), and no event commits to end them: a stream
   * left open would go on telling a client library that nothing changed, and its cache would
   * keep allowing those applications. Also drops the cached settings (settingsChanged). Called
   * after the commit.
   */
  membershipDeleted(membershipId: string): void {
    this.target?.end(membershipId);
    if (!this.notifiesOthers()) return;
    this.toEnd.add(membershipId);
    this.settingsChanged(membershipId);
  }

  /** Only a server has other instances to tell, and a stopping instance tells them nothing more. */
  private notifiesOthers(): boolean {
    return this.database.kind === 'server' && !this.stopped;
  }

  /** One NOTIFY for everything gathered within NOTIFY_COALESCE_MS. */
  private scheduleNotify(): void {
    this.notifyTimer ??= setTimeout(() => void this.sendNotify(), NOTIFY_COALESCE_MS);
  }

  private async sendNotify(): Promise<void> {
    this.notifyTimer = undefined;
    const forget = [...this.toForget].map((membershipId) => `${FORGET_PREFIX}${membershipId}`).join(',');
    let wake = [...this.toNotify].join(',');
    const end = [...this.toEnd].map((membershipId) => `${ENDED_PREFIX}${membershipId}`);
    this.toForget.clear();
    this.toNotify.clear();
    this.toEnd.clear();
    if (wake.length > MAX_NOTIFY_PAYLOAD) wake = '*';
    // After the commit and outside it: a failed NOTIFY costs the other instances at most a poll
    // (streams) or the cache lifetime (settings). The forget goes first, so that an instance
    // whose stream is woken by the second has already dropped what the event made stale.
    try {
      if (forget) await this.repository.notify(CHANNEL, forget.length > MAX_NOTIFY_PAYLOAD ? `${FORGET_PREFIX}*` : forget);
      // One NOTIFY per deleted membership: deletions are rare, and none may be cut to fit a payload.
      for (const item of end) await this.repository.notify(CHANNEL, item);
      // Nothing to wake when only settingsChanged asked for this NOTIFY.
      if (wake) await this.repository.notify(CHANNEL, wake);
    } catch (error) {
      this.logger.warn({ err: error }, 'event streams: NOTIFY failed');
    }
  }

  private notified(payload: string): void {
    if (payload.startsWith(ENDED_PREFIX)) return this.target?.end(payload.slice(ENDED_PREFIX.length));
    if (payload.startsWith(FORGET_PREFIX)) {
      for (const item of payload.split(',')) {
        const membershipId = item.slice(FORGET_PREFIX.length);
        if (membershipId === '*') this.cachedSettings.forgetAll();
        else this.cachedSettings.forgetMembership(membershipId);
      }
      return;
    }
    if (payload === '*') return this.target?.wakeAll();
    for (const membershipId of payload.split(',')) this.target?.wake(membershipId);
  }

  /** The LISTEN connection was lost (or never opened): what was notified meanwhile is gone. */
  private missedNotifications(): void {
    this.cachedSettings.forgetAll();
    this.target?.wakeAll();
  }
}
