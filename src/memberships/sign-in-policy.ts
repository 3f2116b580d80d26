import { DocumentedOptionalIntField } from '../common/dto-fields';

/** Membership field `sign_in_policy` (contract "Sign-in defenses"), in API names. */
export type SignInPolicy = {
  /** Failures of one login within the window that lock it. */
  max_failures: number;
  window_seconds: number;
  /** The first lock's length; each further lock without a success in between doubles it, up to a day. */
  lock_seconds: number;
};

export const SIGN_IN_POLICY_LIMITS = {
  max_failures: [1, 1000],
  window_seconds: [60, 86_400],
  lock_seconds: [1, 86_400],
} as const;

export const DEFAULT_SIGN_IN_POLICY: SignInPolicy = { max_failures: 10, window_seconds: 900, lock_seconds: 60 };

/** Body of `sign_in_policy` in PUT /memberships/{id}: each field optional, defaults fill the rest. */
export class SignInPolicyDto {
  @DocumentedOptionalIntField(...SIGN_IN_POLICY_LIMITS.max_failures, { example: 10, description: 'Failures of one login within the window that lock it (default 10)' })
  max_failures?: number;

  @DocumentedOptionalIntField(...SIGN_IN_POLICY_LIMITS.window_seconds, { example: 900, description: 'The window, seconds (default 900)' })
  window_seconds?: number;

  @DocumentedOptionalIntField(...SIGN_IN_POLICY_LIMITS.lock_seconds, {
    example: 60,
    description: 'The first lock, seconds (default 60); each further lock without a success in between doubles it, up to 86400',
  })
  lock_seconds?: number;
}

/** The policy a body asks for, defaults filled in. */
export function signInPolicyFrom(input: SignInPolicyDto): SignInPolicy {
  return {
    max_failures: input.max_failures ?? DEFAULT_SIGN_IN_POLICY.max_failures,
    window_seconds: input.window_seconds ?? DEFAULT_SIGN_IN_POLICY.window_seconds,
    lock_seconds: input.lock_seconds ?? DEFAULT_SIGN_IN_POLICY.lock_seconds,
  };
}

/** A membership's stored policy; memberships from before the field hold `{}` and get the defaults. */
export function storedSignInPolicy(stored: Record<string, unknown>): SignInPolicy {
  return { ...DEFAULT_SIGN_IN_POLICY, ...(stored as Partial<SignInPolicy>) };
}
