/**
 * The sign-in defenses' port (contract, "Sign-in defenses"): every step that checks a secret a
 * person types (a password at /generate-token or the OpenID Provider's login form, a
 * `current_password`, a check-password answer, a second-factor code, an OTP) asks it first and
 * tells it the outcome, so that one login and one client address lock the same way whatever
 * the step. The implementation keeps the counts in the database: every instance sees a lock at once.
 */

/**
 * Whose failures count: a user, or, for a name that matches no user, that name lower-cased, so
 * that unknown names lock exactly like real ones and a lock tells nothing about who exists.
 */
export type SignInLogin =
  | { readonly userId: string }
  | { readonly unknownName: string }
  /**
   * The device user codes a user types (RFC 8628 5.1: guessing them must be limited). Counted
   * apart from the user's sign-in: approving devices neither locks its password nor ends its count.
   */
  | { readonly userCodesOf: string };

/** The login a sign-in step names: the user it found, or else the `name` it was given, lower-cased. */
export function signInLoginOf(user: { readonly id: string } | null | undefined, name: string): SignInLogin {
  return user ? { userId: user.id } : { unknownName: name.toLowerCase() };
}

export interface SignInAttempt {
  readonly membershipId: string;
  readonly login: SignInLogin;
  /** The client's address: the socket's, or X-Forwarded-For's as far as TRUST_PROXY allows; never X-IpAddress. */
  readonly address: string;
}

/**
 * The window of the device codes one address may request, about a code's lifetime: DEVICE_CODE_ADDRESS_MAX
 * then bounds the codes it holds at once, so a short code policy cannot be filled from a few addresses.
 */
export const DEVICE_CODE_ADDRESS_WINDOW_SECONDS = 900;

export interface SignInAttempts {
  /**
   * Throws `DomainError('TooManySignInAttempts')` (429 with Retry-After) while the login or the address is locked.
   * Counts the attempt as a failure of the login and of the address before the secret is checked (so parallel
   * attempts cannot pass either limit): call it first, outside a request transaction, and end every attempt with
   * recordFailure or recordSuccess (or recordNeither).
   */
  assertOpen(attempt: SignInAttempt): Promise<void>;
  /** One failure of the login and of the address (both counted by assertOpen); the failure that reaches the limit locks the login. */
  recordFailure(attempt: SignInAttempt): Promise<void>;
  /** A success: the login's count starts over, and the address no longer counts the attempt. */
  recordSuccess(attempt: SignInAttempt): Promise<void>;
  /**
   * The secret was right but the sign-in goes on (a second step may be due): the address no longer
   * counts the attempt, while the login keeps it counted until the sign-in ends (recordSuccess or
   * recordFailure of a later step). Only failures stay counted for an address.
   */
  recordRightSecret(attempt: SignInAttempt): Promise<void>;
  /**
   * An attempt that was no wrong guess but proves nothing either, because the secret it matched may be
   * the caller's own (a device user code anyone can create): the attempt is no longer counted, and the
   * failures before it stay, so that such matches between wrong guesses cannot keep the login from its lock.
   * The address no longer counts it either.
   */
  recordNeither(attempt: SignInAttempt): Promise<void>;
  /**
   * Counts a device code requested from `address` (a device sign-in starting, anonymous): throws
   * `RetryLaterError('TooManyDeviceCodeRequests')` (429 with Retry-After) past DEVICE_CODE_ADDRESS_MAX
   * requests within DEVICE_CODE_ADDRESS_WINDOW_SECONDS, over every membership.
   */
  countDeviceCodeRequest(address: string): Promise<void>;
}

export const SIGN_IN_ATTEMPTS = Symbol('SIGN_IN_ATTEMPTS');
