import { Inject, Injectable } from '@nestjs/common';
import { membershipScopedKey, RowCache } from '../common/read-through-cache';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { UserTypeRow } from '../database/schema';
import { SLUG_PATTERN } from '../common/patterns';
import { UserTypeRepository } from './user-type.repository';

/** User types are read on every user write: cached per instance for as long as the specification allows. */
@Injectable()
export class UserTypeCache extends RowCache<UserTypeRow> {
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly userTypes: UserTypeRepository,
  ) {
    super(config);
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

  /** Another instance changed a user type of the membership (it does not say which). */
  forgetMembership(membershipId: string): void {
    this.forgetMembershipScoped(membershipId);
  }
}
