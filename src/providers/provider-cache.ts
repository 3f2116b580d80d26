import { Inject, Injectable } from '@nestjs/common';
import { membershipScopedKey, RowCache } from '../common/read-through-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { ProviderRow } from '../database/schema';
import { ProviderRepository } from './provider.repository';

/**
 * Providers by slug, per instance for PROVIDER_CACHE_TTL_SECONDS (contract): a change shows at
 * once on the instance that made it (the service forgets the entry), elsewhere within the TTL.
 */
@Injectable()
export class ProviderCache extends RowCache<ProviderRow> {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly providers: ProviderRepository,
  ) {
    super(config, { ttlMs: config.providerCacheTtlSeconds * 1000 });
  }

  get(membershipId: string, slug: string): Promise<ProviderRow | undefined> {
    return this.read(membershipScopedKey(membershipId, slug), () => this.providers.findBySlug(membershipId, slug));
  }

  forget(membershipId: string, slug: string): void {
    this.forgetKey(membershipScopedKey(membershipId, slug));
  }
}
