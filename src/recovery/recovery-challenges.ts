import { Injectable } from '@nestjs/common';
import type { MembershipRow } from '../database/schema';
import type { MailOnlyValues } from '../events/event-recorder';
import type { UserChallenges } from '../users/user-challenges';
import { ActivationIssuer } from './activation-issuer';
import { UserChallengeRepository } from './user-challenge.repository';

/** Recovery's side of the users port USER_CHALLENGES: its challenges, opened and ended for a user change. */
@Injectable()
export class RecoveryChallenges implements UserChallenges {
  constructor(
    private readonly activations: ActivationIssuer,
    private readonly challenges: UserChallengeRepository,
  ) {}

  openActivation(membership: MembershipRow, userId: string): Promise<MailOnlyValues> {
    return this.activations.open(membership, userId);
  }

  endPending(membershipId: string, userId: string, kind: 'reset' | 'activation'): Promise<void> {
    return this.challenges.deletePending(membershipId, userId, kind);
  }
}
