import { CACHE_MANAGER } from '@nestjs/cache-manager';
import { Inject, Injectable } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import type { UserTypeRow } from '../database/schema';
import { UserTypeRepository } from './user-type.repository';

/** User types are read on every user write: cached per instance for up to an hour (the specification's limit). */
export const USER_TYPE_CACHE_TTL_MS = 60 * 60 * 1000;
/** A miss is remembered briefly: long enough to spare the database, short enough that a type created on another instance appears soon. */
export const USER_TYPE_MISS_TTL_MS = 10_000;

@Injectable()
export class UserTypeCache {
  constructor(
    @Inject(CACHE_MANAGER) private readonly cache: Cache,
    private readonly userTypes: UserTypeRepository,
  ) {}

  private key(membershipId: string, slug: string): string {
    return `user-type:${membershipId}:${slug}`;
  }

  async getBySlug(membershipId: string, slug: string): Promise<UserTypeRow | undefined> {
    const key = this.key(membershipId, slug);
    const cached = await this.cache.get<UserTypeRow | null>(key);
    if (cached !== undefined) return cached ?? undefined;
    const row = await this.userTypes.findBySlug(membershipId, slug);
    await this.cache.set(key, row ?? null, row ? USER_TYPE_CACHE_TTL_MS : USER_TYPE_MISS_TTL_MS);
    return row;
  }

  /** Called by the instance that changed the type, so the change is visible there at once. */
  async invalidate(membershipId: string, slug: string): Promise<void> {
    await this.cache.del(this.key(membershipId, slug));
  }
}
