import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { BoundedCache } from '../common/bounded-cache';
import { isPossibleId } from '../common/ids';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { MembershipRow } from '../database/schema';
import { MembershipRepository } from './membership.repository';

/** Memberships are cached per instance for up to an hour (the specification's limit). */
export const MEMBERSHIP_CACHE_TTL_MS = 60 * 60 * 1000;
/** A miss is remembered briefly, so probing unknown ids cannot hammer the database. */
export const MEMBERSHIP_MISS_TTL_MS = 10_000;

/** Stands for "no such membership" in the cache (the cache holds no undefined or null). */
const MISSING = Symbol('missing membership');

@Injectable()
export class MembershipCache implements OnModuleDestroy {
  private readonly entries: BoundedCache<MembershipRow | typeof MISSING>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly memberships: MembershipRepository,
  ) {
    this.entries = new BoundedCache({ maxEntries: config.cacheMaxEntries, ttlMs: MEMBERSHIP_CACHE_TTL_MS });
  }

  /** The membership, or undefined; an id that cannot exist is answered without a lookup and never cached. */
  async get(id: string): Promise<MembershipRow | undefined> {
    if (!isPossibleId(id)) return undefined;
    const cached = this.entries.get(id);
    if (cached !== undefined) return cached === MISSING ? undefined : cached;
    const row = await this.memberships.findById(id);
    this.entries.set(id, row ?? MISSING, row ? MEMBERSHIP_CACHE_TTL_MS : MEMBERSHIP_MISS_TTL_MS);
    return row;
  }

  invalidate(id: string): void {
    this.entries.delete(id);
  }

  /** Entries held now (hits and remembered misses). */
  get size(): number {
    return this.entries.size;
  }

  get maxEntries(): number {
    return this.entries.maxEntries;
  }

  onModuleDestroy(): void {
    this.entries.close();
  }
}
