import type { MembershipCache } from '../memberships/membership-cache';
import type { MfaRepository } from './mfa.repository';

/** Whether a user has an enabled factor, and whether its membership's `mfa_policy` requires one. */
export interface FactorStanding {
  enabled: boolean;
  required: boolean;
}

/**
 * The two facts every second-step decision starts from. Asked one after the other: in a request
 * transaction both may query its one client (ambientDatabase).
 */
export async function factorStanding(factors: MfaRepository, memberships: MembershipCache, membershipId: string, userId: string): Promise<FactorStanding> {
  const enabled = await factors.hasEnabledFactor(membershipId, userId);
  const membership = await memberships.get(membershipId);
  return { enabled, required: membership?.mfaPolicy === 'required' };
}
