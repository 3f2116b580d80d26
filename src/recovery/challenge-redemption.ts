import { Injectable } from '@nestjs/common';
import { userInactive } from '../common/errors';
import { EventRecorder } from '../events/event-recorder';
import { MembershipCache } from '../memberships/membership-cache';
import { SignInDefenses } from '../sign-in/sign-in-defenses';
import { PasswordChange } from '../users/password-change';
import { toUserResponse } from '../users/user.mapper';
import { UserRepository } from '../users/user.repository';
import { ChallengeTokens, invalidChallengeToken } from './challenge-tokens';
import type { SetPasswordDto } from './recovery.dto';
import { requireMembership } from './recovery-lookups';
import { UserChallengeRepository } from './user-challenge.repository';

/** Revocation reason stored with the sessions a password reset ends. */
export const PASSWORD_RESET_REASON = 'password_reset';


/**
 * The mailed tokens, used up: a reset token sets a new password, an activation token activates
 * its user. Either came by mail, so using it also proves the user's e-mail address.
 */
@Injectable()
export class ChallengeRedemption {
  constructor(
    private readonly memberships: MembershipCache,
    private readonly users: UserRepository,
    private readonly challenges: UserChallengeRepository,
    private readonly tokens: ChallengeTokens,
    private readonly passwords: PasswordChange,
    private readonly events: EventRecorder,
    private readonly defenses: SignInDefenses,
  ) {}

  /**
   * One transaction: the reset is used up, the hash replaced, every session of the user revoked
   * and UserPasswordChanged recorded. An inactive user's token is kept (401 UserInactive).
   */
  async setPassword(membershipId: string, body: SetPasswordDto): Promise<void> {
    const membership = await requireMembership(this.memberships, membershipId);
    const claims = this.tokens.verify(membership, body.reset_token, 'reset');
    // Cheap checks first, so a token that cannot work costs no password hash.
    const user = await this.users.findById(membership.id, claims.sub);
    if (!user || !(await this.challenges.isPending(membership.id, user.id, 'reset', claims.jti))) throw invalidChallengeToken();
    if (!user.isActive) throw userInactive();
    const passwordHash = await this.passwords.hash(body.password);
    await this.events.transaction(async (record) => {
      const locked = await this.users.findByIdForUpdate(membership.id, user.id);
      if (!locked) throw invalidChallengeToken();
      if (!locked.isActive) throw userInactive();
      if (!(await this.challenges.consume(membership.id, user.id, 'reset', claims.jti))) throw invalidChallengeToken();
      const change = { membershipId: membership.id, userId: user.id, passwordHash, utilizerId: user.id, revokeReason: PASSWORD_RESET_REASON };
      if (!(await this.passwords.apply(record, change))) throw invalidChallengeToken();
      // The reset token came by mail (itself, or as the OTP it was exchanged for): the address is proven.
      await this.users.setEmailVerified(membership.id, user.id, locked.emailAddress, new Date());
    });
    // After the commit: the new password is the user's, so its failed sign-ins and any lock end.
    await this.defenses.clearUser(membership.id, user.id);
  }

  /** The user activates itself with the mailed token; an admin activation or freeze has ended the token. */
  async activate(membershipId: string, activationToken: string): Promise<void> {
    const membership = await requireMembership(this.memberships, membershipId);
    const claims = this.tokens.verify(membership, activationToken, 'activation');
    await this.events.transaction(async (record) => {
      const locked = await this.users.findByIdForUpdate(membership.id, claims.sub);
      if (!locked || !(await this.challenges.consume(membership.id, locked.id, 'activation', claims.jti))) throw invalidChallengeToken();
      // The activation token came by mail: the address is proven.
      await this.users.setEmailVerified(membership.id, locked.id, locked.emailAddress, new Date());
      if (locked.isActive) return;
      const row = await this.users.update(membership.id, locked.id, { isActive: true, modifiedAt: new Date(), modifiedBy: locked.id });
      if (!row) throw invalidChallengeToken();
      record({ membershipId: membership.id, eventType: 'UserUpdated', utilizerId: locked.id, document: toUserResponse(row), prior: toUserResponse(locked) });
    });
  }
}
