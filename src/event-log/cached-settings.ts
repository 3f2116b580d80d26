import { Injectable } from '@nestjs/common';
import { MembershipCache } from '../memberships/membership-cache';
import { RoleCache } from '../roles/role-cache';
import { UserTypeCache } from '../user-types/user-type-cache';

/**
 * Whether an event changes what an instance may hold in its per-instance caches of the
 * membership: its roles (every permission answer), its user types, and the membership row itself
 * (name, slug, policies). The instance that made the change forgets the rows it changed at once;
 * the others hear of it through this.
 */
export function changesCachedSettings(eventType: string): boolean {
  return eventType.startsWith('Role') || eventType.startsWith('UserType') || eventType.startsWith('Membership');
}

/**
 * Drops what this instance cached of a membership's settings when another instance changed them
 * (EventWakeups, on the NOTIFY sent after that commit; EventStreams, on reading such an event, so
 * that a client that drops its own cache on the event and asks again is never answered from
 * this instance's older copy). The events name the membership, not always the row (a role's
 * slug is in its document, a user type's too, but a miss cached for a slug about to be created is
 * not): all of the membership's cached roles, user types and its row go. They are few, and
 * these changes rare, so the refill costs a handful of lookups.
 */
@Injectable()
export class CachedSettings {
  constructor(
    private readonly roles: RoleCache,
    private readonly userTypes: UserTypeCache,
    private readonly memberships: MembershipCache,
  ) {}

  forgetMembership(membershipId: string): void {
    this.roles.forgetMembership(membershipId);
    this.userTypes.forgetMembership(membershipId);
    this.memberships.invalidate(membershipId);
  }

  /** Changes may have gone unheard (the LISTEN connection was down): everything goes. */
  forgetAll(): void {
    this.roles.forgetAll();
    this.userTypes.forgetAll();
    this.memberships.forgetAll();
  }
}
