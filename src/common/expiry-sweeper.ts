import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { LOGGER } from './logger';
import { DATABASE, type Database, queryRows } from '../database/database';

/**
 * Tables whose rows die at a time in a column; later features add theirs here.
 * `alsoEnds` deletes what the deleted rows leave empty: a sign-in session ends with its last
 * token record (no token can join it then: joining needs a live token of the session).
 */
interface SweptTable {
  table: string;
  expiresColumn: string;
  alsoEnds?: { table: string; via: string };
  /** Only rows this picks die (finished deliveries, not pending ones). */
  only?: ReturnType<typeof sql>;
  /** How long past `expiresColumn` a row is kept; left out, SWEEP_GRACE_SECONDS. */
  keepSeconds?: (config: AppConfig) => number;
}

const SWEPT_TABLES: readonly SweptTable[] = [
  { table: 'token_sessions', expiresColumn: 'expires_at', alsoEnds: { table: 'sessions', via: 'session_id' } },
  // A poll of an expired code answers ExpiredToken until the row is swept here.
  { table: 'token_codes', expiresColumn: 'expires_at' },
  // Pending resets and activations: their tokens have expired by then, and the reset interval is over.
  { table: 'user_challenges', expiresColumn: 'expires_at' },
  // Finished webhook deliveries (contract "Durable webhook delivery"); pending ones are never swept.
  {
    table: 'deliveries',
    expiresColumn: 'updated_at',
    only: sql`status <> 'pending'`,
    keepSeconds: (config) => config.webhookDeliveryRetentionDays * 86_400,
  },
  // Sign-in failure counts and locks: past their window, their lock, and the day the lock's doubling is remembered.
  { table: 'sign_in_counters', expiresColumn: 'expires_at' },
  { table: 'mfa_sign_ins', expiresColumn: 'expires_at' },
  // Retired signing keys past their overlap (a current key has no expiry).
  { table: 'signing_keys', expiresColumn: 'expires_at' },
  // The OpenID Provider's interactions (600 s), authorization codes (60 s) and client tokens.
  { table: 'oidc_interactions', expiresColumn: 'expires_at' },
  { table: 'oidc_authorization_codes', expiresColumn: 'expires_at' },
  { table: 'oidc_client_tokens', expiresColumn: 'expires_at' },
];

const BATCH_SIZE = 1_000;
/** One run never holds the database longer than this many batches; the next run continues. */
const MAX_BATCHES_PER_RUN = 50;
const SWEEP_LOCK_KEY = 7_460_310_213;

export interface SweepResult {
  /** False when another instance held the lock, so this one did nothing. */
  ran: boolean;
  deleted: number;
}

/**
 * Deletes expired records a few minutes after they expire, in bounded batches (never one huge
 * DELETE), on one instance at a time: each batch runs under a transaction-scoped advisory lock
 * that other instances try and skip.
 */
@Injectable()
export class ExpirySweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepResult> | undefined;

  constructor(
    @Inject(DATABASE) private readonly database: Database,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.sweep(), this.config.sweepIntervalMs);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One run; concurrent calls on this instance share it. */
  sweep(): Promise<SweepResult> {
    this.running ??= this.runOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async runOnce(): Promise<SweepResult> {
    let deleted = 0;
    try {
      for (const swept of SWEPT_TABLES) {
        for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
          const outcome = await this.deleteBatch(swept);
          if (outcome === null) return { ran: false, deleted };
          deleted += outcome;
          if (outcome < BATCH_SIZE) break;
        }
      }
      if (deleted) this.logger.info({ deleted }, 'expiry sweeper deleted expired records');
      return { ran: true, deleted };
    } catch (error) {
      this.logger.error({ err: error }, 'expiry sweeper failed');
      return { ran: false, deleted };
    }
  }

  /** Deleted row count (of the swept table), or null when another instance holds the lock. */
  private deleteBatch({ table, expiresColumn, alsoEnds, only, keepSeconds }: SweptTable): Promise<number | null> {
    const grace = keepSeconds ? keepSeconds(this.config) : this.config.sweepGraceSeconds;
    return this.database.db.transaction(async (tx) => {
      const [lock] = await queryRows<{ locked: boolean }>(tx, sql`select pg_try_advisory_xact_lock(${SWEEP_LOCK_KEY}) as locked`);
      if (!lock?.locked) return null;
      const swept = sql.identifier(table);
      const expired = sql`select id from ${swept}
                where ${sql.identifier(expiresColumn)} < now() - make_interval(secs => ${grace})${only ? sql` and ${only}` : sql``}
                limit ${BATCH_SIZE}`;
      if (!alsoEnds) {
        const rows = await queryRows<{ id: string }>(tx, sql`delete from ${swept} where id in (${expired}) returning id`);
        return rows.length;
      }
      const owners = sql.identifier(alsoEnds.table);
      const via = sql.identifier(alsoEnds.via);
      // One statement; its `not exists` reads the rows as they were before it, so the rows it
      // deletes are left out by hand.
      const rows = await queryRows<{ id: string }>(
        tx,
        sql`with gone as (
              delete from ${swept} where id in (${expired})
              returning id, ${via} as owner
            ), ended as (
              delete from ${owners} o where o.id in (select owner from gone)
                and not exists (select 1 from ${swept} r where r.${via} = o.id and r.id not in (select id from gone))
              returning o.id
            )
            select id from gone`,
      );
      return rows.length;
    });
  }
}
