import type { MembershipRow } from '../database/schema';
import type { MailOnlyValues } from '../events/event-recorder';

/**
 * The port through which users hears of recovery's challenges (architecture "ports"): recovery
 * sits above users and owns the challenges (reset, activation), yet a user change must open or
 * end them. Recovery's module provides this token; users never imports recovery.
 */
export interface UserChallenges {
  /** Opens a pending self-activation for a user created inactive under `user_activation: passive`. */
  openActivation(membership: MembershipRow, userId: string): Promise<MailOnlyValues>;
  /** Ends the user's pending challenge of that kind (an admin's word on is_active, a new password, a freeze). */
  endPending(membershipId: string, userId: string, kind: 'reset' | 'activation'): Promise<void>;
}

export const USER_CHALLENGES = Symbol('USER_CHALLENGES');
