import { CACHE_MANAGER } from '@nestjs/cache-manager';
import { Inject, Injectable } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import type { MembershipRow } from '../database/schema';
import { MembershipRepository } from './membership.repository';

/** Memberships are cached per instance for up to an hour (the specification's limit). */
export const MEMBERSHIP_CACHE_TTL_MS = 60 * 60 * 1000;

@Injectable()
export class MembershipCache {
  constructor(
    @Inject(CACHE_MANAGER) private readonly cache: Cache,
    private readonly memberships: MembershipRepository,
  ) {}

  async get(id: string): Promise<MembershipRow | undefined> {
    const key = `membership:${id}`;
    const cached = await this.cache.get<MembershipRow | null>(key);
    if (cached !== undefined) return cached ?? undefined;
    const row = await this.memberships.findById(id);
    // Misses are cached briefly too, so probing unknown ids cannot hammer the database.
    await this.cache.set(key, row ?? null, row ? MEMBERSHIP_CACHE_TTL_MS : 10_000);
    return row;
  }

  async invalidate(id: string): Promise<void> {
    await this.cache.del(`membership:${id}`);
  }
}
