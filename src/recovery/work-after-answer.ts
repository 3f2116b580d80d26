import { type BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { LOGGER } from '../common/logger';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { settleWithin } from '../queue/settle-within';

/**
 * Work a route goes on with after it has answered (a reset request's lookup, token and mail): it
 * starts once the answer is on its way, a failure is logged with the route's line and the error
 * alone, and shutdown waits for what still runs, SHUTDOWN_DRAIN_MS at most.
 */
@Injectable()
export class WorkAfterAnswer implements BeforeApplicationShutdown {
  /** Work started and not yet settled; shutdown waits for it. */
  private readonly pending = new Set<Promise<void>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Starts `work` after the current answer; `failure` is the line logged should it fail. */
  start(work: () => Promise<void>, failure: string): void {
    setImmediate(() => this.track(work(), failure));
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.pending.size) await settleWithin([...this.pending], this.config.shutdownDrainMs);
  }

  private track(work: Promise<void>, failure: string): void {
    const tracked = work
      .catch((error: unknown) => {
        // The error only: what the request named (a login, perhaps of no user) stays out of the log.
        this.logger.error({ err: error }, failure);
      })
      .finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }
}
