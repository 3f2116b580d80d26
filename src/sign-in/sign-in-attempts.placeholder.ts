import { Injectable } from '@nestjs/common';
import type { SignInAttempt, SignInAttempts } from './sign-in-attempts';

/**
 * PLACEHOLDER until the sign-in defenses merge: it allows every attempt and counts nothing. The
 * integrator deletes this file and its one provider line in sign-in.module.ts, and binds
 * SIGN_IN_ATTEMPTS to the sign-in defenses' implementation instead. The second factors already
 * call the port at every check (assertOpen, then recordFailure or recordSuccess).
 */
@Injectable()
export class AllowEverySignInAttempt implements SignInAttempts {
  async assertOpen(_attempt: SignInAttempt): Promise<void> {}
  async recordFailure(_attempt: SignInAttempt): Promise<void> {}
  async recordSuccess(_attempt: SignInAttempt): Promise<void> {}
}
