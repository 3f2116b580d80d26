import { Injectable } from '@nestjs/common';
import { DomainError, userNotFound } from '../common/errors';
import type { Decision } from '../permissions/decide';
import { isPossibleId } from '../common/ids';
import { SignInCounterRepository } from './sign-in-counter.repository';
import { SignInDefenses } from './sign-in-defenses';

/** The administrator's side of the sign-in defenses. */
@Injectable()
export class SignInService {
  constructor(
    private readonly defenses: SignInDefenses,
    private readonly counters: SignInCounterRepository,
  ) {}

  /**
   * `POST .../users/{id}/unlock`: 404 for a user that does not exist, else the count starts over.
   * Never through the own-record rule: a stolen token must not buy its holder unlimited guesses of
   * the password (check-password, current_password) by unlocking between them.
   */
  async unlock(membershipId: string, userId: string, decision: Decision | undefined): Promise<void> {
    if (decision?.reason === 'own_record') {
      throw new DomainError('AccessDenied', "Unlocking a user's sign-in needs the users.update permission; nobody unlocks their own");
    }
    if (!isPossibleId(userId) || !(await this.counters.findUser(membershipId, userId))) {
      throw userNotFound();
    }
    await this.defenses.clearUser(membershipId, userId);
  }
}
