import { Inject, Injectable } from '@nestjs/common';
import { isPossibleId } from '../common/ids';
import { ReadThroughCache } from '../common/read-through-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { MembershipRow } from '../database/schema';
import { MembershipRepository } from './membership.repository';

/** Memberships are cached per instance for up to an hour (the specification's limit). */
export const MEMBERSHIP_CACHE_TTL_MS = 60 * 60 * 1000;
/** A miss is remembered briefly, so probing unknown ids cannot hammer the database. */
export const MEMBERSHIP_MISS_TTL_MS = 10_000;

@Injectable()
export class MembershipCache extends ReadThroughCache<MembershipRow> {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly memberships: MembershipRepository,
  ) {
    super({ maxEntries: config.cacheMaxEntries, ttlMs: MEMBERSHIP_CACHE_TTL_MS, missTtlMs: MEMBERSHIP_MISS_TTL_MS });
  }

  /** The membership, or undefined; an id that cannot exist is answered without a lookup and never cached. */
  async get(id: string): Promise<MembershipRow | undefined> {
    if (!isPossibleId(id)) return undefined;
    return this.read(id, () => this.memberships.findById(id));
  }

  invalidate(id: string): void {
    this.forgetKey(id);
  }
}
