/**
 * Failed sign-ins (POST /generate-token with credentials), reported to whoever counts them (the
 * metrics module provides SIGN_IN_FAILURE_OBSERVER). The reason is the error code answered, from
 * this closed list, so a metric label cannot grow with caller input.
 */
export const SIGN_IN_FAILURE_REASONS = [
  'MembershipIdRequired',
  'ModelValidationError',
  'MembershipNotFound',
  'InvalidCredentials',
  'UserInactive',
] as const;
export type SignInFailureReason = (typeof SIGN_IN_FAILURE_REASONS)[number];

export interface SignInFailureObserver {
  signInFailed(reason: SignInFailureReason): void;
}

export const SIGN_IN_FAILURE_OBSERVER = Symbol('SIGN_IN_FAILURE_OBSERVER');

export function isSignInFailureReason(code: string): code is SignInFailureReason {
  return (SIGN_IN_FAILURE_REASONS as readonly string[]).includes(code);
}
