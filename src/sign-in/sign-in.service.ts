import { Injectable } from '@nestjs/common';
import { userNotFound } from '../common/errors';
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

  /** `POST .../users/{id}/unlock`: 404 for a user that does not exist, else the count starts over. */
  async unlock(membershipId: string, userId: string): Promise<void> {
    if (!isPossibleId(userId) || !(await this.counters.findUser(membershipId, userId))) {
      throw userNotFound();
    }
    await this.defenses.clearUser(membershipId, userId);
  }
}
