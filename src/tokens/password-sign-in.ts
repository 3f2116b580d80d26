import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Logger } from 'pino';
import { DomainError, invalidCredentials, userInactive } from '../common/errors';
import { isPossibleId } from '../common/ids';
import { LOGGER } from '../common/logger';
import type { UserRecord } from '../database/schema';
import { TokenSessionRepository, type SigningMembership } from '../sessions/token-session.repository';
import { SIGN_IN_ATTEMPTS, type SignInAttempt, type SignInAttempts, signInLoginOf } from '../sign-in/sign-in-attempts';
import { MAX_PASSWORD_LENGTH, PasswordHasher } from '../users/password-hasher';
import { signInFailureReasonOf, SIGN_IN_FAILURE_OBSERVER, type SignInFailureObserver } from './sign-in-failures';
import type { SessionMetadata } from './token.dto';

/** Membership ids are at most 64 characters; a longer header value is cut in the log. */
const MAX_LOGGED_MEMBERSHIP_ID = 64;


/** A right password: its membership and user, and the attempt the sign-in defenses counted for it. */
export interface PasswordPassed {
  membership: SigningMembership;
  user: UserRecord;
  attempt: SignInAttempt;
  /** The hash the password was checked against: a session opens only while it is still the user's. */
  passwordHash: string;
}

/**
 * The password step of a sign-in (`/generate-token`, the OpenID Provider's login page), behind the
 * sign-in defenses: an unknown user and a wrong password answer alike, in about the same time. A
 * failure is logged at info with its code and the membership named (never the login or the
 * password) and counted by reason.
 *
 * A right password does not clear the login's count: the sign-in is not over while a second
 * factor is due, and wrong codes must add up to a lock with the passwords before them (else each
 * right password would start the count over, and second factors could be guessed without end).
 * The caller calls `signInCompleted` when no second step follows, else `signInContinues`; a passed
 * second step clears the count itself.
 */
@Injectable()
export class PasswordSignIn {
  constructor(
    private readonly hasher: PasswordHasher,
    private readonly sessions: TokenSessionRepository,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(SIGN_IN_ATTEMPTS) private readonly attempts: SignInAttempts,
    @Optional() @Inject(SIGN_IN_FAILURE_OBSERVER) private readonly failures?: SignInFailureObserver,
  ) {}

  /** The membership and the active user whose password was right, and the attempt to complete. */
  async authenticate(
    membershipId: string | undefined,
    login: string | undefined,
    password: string | undefined,
    metadata: SessionMetadata,
  ): Promise<PasswordPassed> {
    try {
      return await this.check(membershipId, login, password, metadata);
    } catch (error) {
      const reason = error instanceof DomainError ? signInFailureReasonOf(error.code) : undefined;
      if (error instanceof DomainError && reason) {
        // The header is caller input: bounded, so a flood of long values cannot bloat the log.
        this.logger.info({ errorCode: error.code, membershipId: membershipId?.slice(0, MAX_LOGGED_MEMBERSHIP_ID) }, 'sign-in failed');
        this.failures?.signInFailed(reason);
      }
      throw error;
    }
  }

  /**
   * The sign-in of a right password is complete (no second step follows): the login's count starts
   * over, and the address gives the attempt's place back (one statement).
   */
  async signInCompleted(attempt: SignInAttempt): Promise<void> {
    await this.attempts.recordSuccess(attempt);
  }

  /**
   * The password was right but the sign-in does not end here (a second step is due, or the
   * caller refuses it for another reason): the address gives the attempt's place back at once,
   * since a right password is no failure of the address whatever follows, and the login's count
   * waits for the end of the sign-in. Every caller of `authenticate` ends a right password with
   * this or `signInCompleted`; only the first costs a statement of its own.
   */
  async signInContinues(attempt: SignInAttempt): Promise<void> {
    await this.attempts.recordRightSecret(attempt);
  }

  private async check(
    membershipId: string | undefined,
    login: string | undefined,
    password: string | undefined,
    metadata: SessionMetadata,
  ): Promise<PasswordPassed> {
    if (!membershipId) throw new DomainError('MembershipIdRequired', 'The X-Service-Alias header (membership id) is required');
    if (!login || !password) throw new DomainError('ModelValidationError', 'username and password are required', [
      ...(!login ? [{ field: 'username', message: 'is required' }] : []),
      ...(!password ? [{ field: 'password', message: 'is required' }] : []),
    ]);
    // A membership id that cannot exist is not looked up (contract, "Bounded work").
    const record = isPossibleId(membershipId) ? await this.sessions.findSignInRecord(membershipId, login) : undefined;
    if (!record) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    const { membership, user } = record;
    // Before any hash: a locked login or address answers 429 whatever the password, and an unknown
    // name is counted (and locked) exactly like a user, under its lower-cased name.
    const attempt: SignInAttempt = {
      membershipId: membership.id,
      login: signInLoginOf(user, login),
      address: metadata.clientAddress ?? 'unknown',
    };
    await this.attempts.assertOpen(attempt);
    if (!user || password.length > MAX_PASSWORD_LENGTH) {
      await this.hasher.verifyDecoy(password.slice(0, MAX_PASSWORD_LENGTH));
      await this.attempts.recordFailure(attempt);
      throw invalidCredentials();
    }
    if (!(await this.hasher.verify(user.passwordHash, password))) {
      await this.attempts.recordFailure(attempt);
      throw invalidCredentials();
    }
    if (!user.isActive) {
      // The password was right and no sign-in follows: the guessing is over.
      await this.attempts.recordSuccess(attempt);
      throw userInactive();
    }
    const { passwordHash, ...userRecord } = user;
    return { membership, user: userRecord, attempt, passwordHash };
  }
}
