import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { BoundedCache } from '../common/bounded-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { ProviderRow } from '../database/schema';
import { ProviderRepository } from './provider.repository';

/** Stands for "no such provider" in the cache (the cache holds no undefined). */
const MISSING = Symbol('missing provider');

const keyOf = (membershipId: string, slug: string): string => `${membershipId}\n${slug}`;

/**
 * Providers by slug, per instance for PROVIDER_CACHE_TTL_SECONDS (contract): a change shows at
 * once on the instance that made it (the service forgets the entry), elsewhere within the TTL.
 */
@Injectable()
export class ProviderCache implements OnModuleDestroy {
  private readonly entries: BoundedCache<ProviderRow | typeof MISSING>;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly providers: ProviderRepository,
  ) {
    this.entries = new BoundedCache({ maxEntries: config.cacheMaxEntries, ttlMs: config.providerCacheTtlSeconds * 1000 });
  }

  async get(membershipId: string, slug: string): Promise<ProviderRow | undefined> {
    const key = keyOf(membershipId, slug);
    const cached = this.entries.get(key);
    if (cached !== undefined) return cached === MISSING ? undefined : cached;
    const row = await this.providers.findBySlug(membershipId, slug);
    this.entries.set(key, row ?? MISSING);
    return row;
  }

  forget(membershipId: string, slug: string): void {
    this.entries.delete(keyOf(membershipId, slug));
  }

  onModuleDestroy(): void {
    this.entries.close();
  }
}
