import { Inject, Injectable } from '@nestjs/common';
import { membershipScopedKey, ReadThroughCache } from '../common/read-through-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { UserTypeRow } from '../database/schema';
import { SLUG_PATTERN } from '../common/patterns';
import { UserTypeRepository } from './user-type.repository';

/** User types are read on every user write: cached per instance for up to an hour (the specification's limit). */
export const USER_TYPE_CACHE_TTL_MS = 60 * 60 * 1000;
/** A miss is remembered briefly: long enough to spare the database, short enough that a type created on another instance appears soon. */
export const USER_TYPE_MISS_TTL_MS = 10_000;

@Injectable()
export class UserTypeCache extends ReadThroughCache<UserTypeRow> {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly userTypes: UserTypeRepository,
  ) {
    super({ maxEntries: config.cacheMaxEntries, ttlMs: USER_TYPE_CACHE_TTL_MS, missTtlMs: USER_TYPE_MISS_TTL_MS });
  }

  /** The user type, or undefined; a slug that cannot exist (the request's `user_type`) is answered without a lookup and never cached. */
  async getBySlug(membershipId: string, slug: string): Promise<UserTypeRow | undefined> {
    if (!SLUG_PATTERN.test(slug)) return undefined;
    return this.read(membershipScopedKey(membershipId, slug), () => this.userTypes.findBySlug(membershipId, slug));
  }

  /** Called by the instance that changed the type, so the change is visible there at once. */
  invalidate(membershipId: string, slug: string): void {
    this.forgetKey(membershipScopedKey(membershipId, slug));
  }
}
