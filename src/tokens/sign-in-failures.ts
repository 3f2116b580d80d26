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
  // TooManySignInAttempts: the login or the address was locked (contract "Sign-in defenses").
  'locked',
] as const;
export type SignInFailureReason = (typeof SIGN_IN_FAILURE_REASONS)[number];

export interface SignInFailureObserver {
  signInFailed(reason: SignInFailureReason): void;
}

export const SIGN_IN_FAILURE_OBSERVER = Symbol('SIGN_IN_FAILURE_OBSERVER');

export function isSignInFailureReason(code: string): code is SignInFailureReason {
  return (SIGN_IN_FAILURE_REASONS as readonly string[]).includes(code);
}

/** The metric's reason for an answered error code: the code itself, `locked` for a lock; undefined when it is no sign-in failure. */
export function signInFailureReasonOf(code: string): SignInFailureReason | undefined {
  const reason = code === 'TooManySignInAttempts' ? 'locked' : code;
  return isSignInFailureReason(reason) ? reason : undefined;
}
