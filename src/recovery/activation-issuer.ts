import { Injectable } from '@nestjs/common';
import { newId } from '../common/ids';
import type { MembershipRow } from '../database/schema';
import type { MailOnlyValues } from '../events/event-recorder';
import { ChallengeTokens } from './challenge-tokens';
import { UserChallengeRepository } from './user-challenge.repository';

/**
 * Opens a pending activation for a user who starts inactive under `user_activation: passive`
 * (contract "Account recovery, activation and password checks"); the token goes to mail hooks
 * beside `UserCreated` and nowhere else.
 */
@Injectable()
export class ActivationIssuer {
  constructor(
    private readonly tokens: ChallengeTokens,
    private readonly challenges: UserChallengeRepository,
  ) {}

  async open(membership: MembershipRow, userId: string): Promise<MailOnlyValues> {
    const issued = this.tokens.issue(membership, userId, 'activation');
    await this.challenges.replaceActivation({ id: newId(), membershipId: membership.id, userId, jti: issued.jti, expiresAt: issued.expiresAt });
    return { activation_token: issued.token, activation_token_expires_in: String(issued.expiresIn) };
  }
}
