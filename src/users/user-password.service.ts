import { Inject, Injectable } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { DomainError, userNotFound } from '../common/errors';
import { validationFailure } from '../common/validation';
import { EventRecorder } from '../events/event-recorder';
import { assertMayTakeOver } from '../roles/assignment';
import { CallerPermissions } from '../roles/caller-permissions';
import { RoleRepository } from '../roles/role.repository';
import { SIGN_IN_ATTEMPTS, type SignInAttempt, type SignInAttempts } from '../sign-in/sign-in-attempts';
import { checkPasswordAttempt, invalidCurrentPassword } from './password-attempt';
import { PasswordChange } from './password-change';
import { PasswordHasher } from './password-hasher';
import { USER_CHALLENGES, type UserChallenges } from './user-challenges';
import type { ChangePasswordDto } from './user.dto';
import { UserRepository } from './user.repository';

/** Revocation reason stored with the sessions a password change ends. */
const PASSWORD_CHANGED_REASON = 'password_changed';


const samePassword = (): DomainError => validationFailure([{ field: 'password', message: 'must differ from the current password' }]);

/**
 * A user's password on the users routes: changed by the user itself (proving the current one) or
 * by a caller holding `users.update.{id}` and every grant the user holds, and checked by the user itself. A password proved on
 * these routes counts as a sign-in attempt of the user (contract "Sign-in defenses").
 */
@Injectable()
export class UserPasswordService {
  constructor(
    private readonly repository: UserRepository,
    private readonly hasher: PasswordHasher,
    private readonly passwords: PasswordChange,
    private readonly events: EventRecorder,
    private readonly permissions: CallerPermissions,
    private readonly roles: RoleRepository,
    @Inject(USER_CHALLENGES) private readonly challenges: UserChallenges,
    @Inject(SIGN_IN_ATTEMPTS) private readonly attempts: SignInAttempts,
  ) {}

  /**
   * Sets a new password and revokes the user's sessions: all of them when someone else changes
   * it, all but the caller's own session when users change their own. Users changing their own
   * prove the current password, so a stolen access token alone cannot take the account over; the
   * guard lets anyone else through only with `users.update.{id}`. A refused change revokes nothing.
   */
  async changePassword(membershipId: string, id: string, caller: Caller, body: ChangePasswordDto, clientAddress: string): Promise<void> {
    const self = caller.kind === 'user' && caller.id === id;
    if (self && body.current_password === undefined) {
      throw validationFailure([{ field: 'current_password', message: 'is required to change your own password' }]);
    }
    if (!self && body.current_password !== undefined) {
      throw validationFailure([{ field: 'current_password', message: 'is sent only by users changing their own password' }]);
    }
    const user = await this.repository.findById(membershipId, id);
    if (!user) throw userNotFound();
    if (self) {
      // Equal strings need no hash to compare; the current one is verified once, below.
      if (body.current_password === body.password) throw samePassword();
      // A wrong current password is a failed sign-in of the user (contract "Sign-in defenses").
      const attempt: SignInAttempt = { membershipId, login: { userId: id }, address: clientAddress };
      if (!(await checkPasswordAttempt(this.attempts, this.hasher, attempt, user.passwordHash, body.current_password ?? ''))) throw invalidCurrentPassword();
    } else {
      // Setting someone else's password takes the account over: the caller must hold what the user holds.
      await assertMayTakeOver(await this.permissions.granterOf(caller), this.roles, membershipId, user);
      if (await this.hasher.verify(user.passwordHash, body.password)) throw samePassword();
    }
    const passwordHash = await this.passwords.hash(body.password);
    const exceptSessionId = self && caller.kind === 'user' ? caller.sessionId : undefined;
    await this.events.transaction(async (record) => {
      // A reset mailed before the change must not undo it.
      await this.challenges.endPending(membershipId, id, 'reset');
      const change = { membershipId, userId: id, passwordHash, utilizerId: caller.id, revokeReason: PASSWORD_CHANGED_REASON, exceptSessionId };
      if (!(await this.passwords.apply(record, change))) throw userNotFound();
    });
  }

  /**
   * The caller's own password, checked (contract "Check password"): one Argon2 verification, no
   * event, no session change. A `false` is a failed sign-in of the user, and a locked user
   * answers 429 (contract "Sign-in defenses"). The value is never logged or echoed.
   */
  async checkPassword(caller: Caller, password: unknown, clientAddress: string): Promise<{ valid: boolean }> {
    if (caller.kind !== 'user') throw new DomainError('AccessDenied', 'Only a user checks its own password; applications have none');
    if (typeof password !== 'string' || password === '') throw validationFailure([{ field: 'password', message: 'is required, as one string' }]);
    const user = await this.repository.findById(caller.membershipId, caller.id);
    if (!user) throw userNotFound();
    const attempt: SignInAttempt = { membershipId: caller.membershipId, login: { userId: user.id }, address: clientAddress };
    return { valid: await checkPasswordAttempt(this.attempts, this.hasher, attempt, user.passwordHash, password) };
  }
}
