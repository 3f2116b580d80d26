import { DomainError } from '../common/errors';
import type { SignInAttempt, SignInAttempts } from '../sign-in/sign-in-attempts';
import { MAX_PASSWORD_LENGTH, type PasswordHasher } from './password-hasher';

/**
 * A user's password checked as a sign-in attempt of its login (contract "Sign-in defenses"): 429
 * TooManySignInAttempts while the login or the address is locked; otherwise counted a failure when
 * wrong and a success when right. The one rule of the routes that take the user's own password
 * besides sign-in (change password, check password, second factors).
 */
export async function checkPasswordAttempt(
  attempts: SignInAttempts,
  hasher: PasswordHasher,
  attempt: SignInAttempt,
  passwordHash: string,
  password: string,
): Promise<boolean> {
  await attempts.assertOpen(attempt);
  // Longer than any password the service accepts: cannot match, and costs no hashing.
  const valid = password.length <= MAX_PASSWORD_LENGTH && (await hasher.verify(passwordHash, password));
  await (valid ? attempts.recordSuccess(attempt) : attempts.recordFailure(attempt));
  return valid;
}

/** The answer to a wrong `current_password` (a failed sign-in, counted by checkPasswordAttempt). */
export const invalidCurrentPassword = (): DomainError => new DomainError('InvalidCurrentPassword', 'The current password is not correct');
