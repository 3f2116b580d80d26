import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Logger } from 'pino';
import { LOGGER } from '../common/logger';
import { DATABASE, type Database } from '../database/database';
import type { EventRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { EventStreamRepository } from './event-stream.repository';

/** The NOTIFY channel every instance LISTENs on; the payload is a comma-separated list of membership ids. */
const CHANNEL = 'portcullis_events';
/** Commits within this window share one NOTIFY: under load, at most a few statements a second per instance. */
const NOTIFY_COALESCE_MS = 25;
/** A NOTIFY payload must stay under 8000 bytes; past this, `*` wakes every stream. */
const MAX_NOTIFY_PAYLOAD = 7_000;

/** Whom a wake-up reaches: this instance's streams of one membership, or all of them. */
export interface WakeTarget {
  wake(membershipId: string): void;
  wakeAll(): void;
}

/**
 * Says "look now" to this instance's event streams when events commit: at once for this
 * instance's own commits (EventRecorder listeners), and on a PostgreSQL server for the other
 * instances' commits, through the NOTIFY each instance sends after its own (coalesced) and a
 * LISTEN opened with the first stream. The embedded database has one writer, this process, so
 * it needs neither. A lost notification costs a stream at most its poll.
 */
@Injectable()
export class EventWakeups implements OnModuleDestroy {
  private target: WakeTarget | undefined;
  private listening: Promise<(() => Promise<void>) | undefined> | undefined;
  private readonly toNotify = new Set<string>();
  private notifyTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly recorder: EventRecorder,
    private readonly repository: EventStreamRepository,
    @Inject(DATABASE) private readonly database: Database,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Wake-ups go to `target` from now on; called once, by the streams' hub at start. */
  deliverTo(target: WakeTarget): void {
    this.target = target;
    this.recorder.onCommitted((events) => this.committed(events));
  }

  /** On a server, LISTEN from the first stream on; resolves once listening (or once it failed: the poll still delivers). */
  listen(): Promise<unknown> {
    const listen = this.database.listen;
    if (!listen) return Promise.resolve();
    this.listening ??= listen(CHANNEL, (payload) => this.notified(payload), () => this.target?.wakeAll()).catch((error: unknown) => {
      // The poll still delivers; try LISTEN again with the next stream.
      this.logger.warn({ err: error }, 'event streams: LISTEN failed; streams poll until it works');
      this.listening = undefined;
      return undefined;
    });
    return this.listening;
  }

  /** No NOTIFY from here on: the instance is stopping. */
  stop(): void {
    this.stopped = true;
  }

  async onModuleDestroy(): Promise<void> {
    this.stop();
    clearTimeout(this.notifyTimer);
    const unlisten = await this.listening?.catch(() => undefined);
    await unlisten?.();
  }

  private committed(events: readonly EventRow[]): void {
    const memberships = new Set(events.map((event) => event.membershipId));
    for (const membershipId of memberships) this.target?.wake(membershipId);
    if (this.database.kind !== 'server' || this.stopped) return;
    for (const membershipId of memberships) this.toNotify.add(membershipId);
    this.notifyTimer ??= setTimeout(() => this.sendNotify(), NOTIFY_COALESCE_MS);
  }

  private sendNotify(): void {
    this.notifyTimer = undefined;
    let payload = [...this.toNotify].join(',');
    this.toNotify.clear();
    if (payload.length > MAX_NOTIFY_PAYLOAD) payload = '*';
    // After the commit and outside it: a failed NOTIFY costs the other instances at most a poll.
    this.repository.notify(CHANNEL, payload).catch((error: unknown) => this.logger.warn({ err: error }, 'event streams: NOTIFY failed'));
  }

  private notified(payload: string): void {
    if (payload === '*') return this.target?.wakeAll();
    for (const membershipId of payload.split(',')) this.target?.wake(membershipId);
  }
}
