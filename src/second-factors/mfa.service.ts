import { Inject, Injectable } from '@nestjs/common';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import type { RequestActor } from '../common/access-decorators';
import { DomainError, userNotFound } from '../common/errors';
import { validationFailure } from '../common/validation';
import type { UserRow, WebauthnCredentialRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { MembershipCache } from '../memberships/membership-cache';
import { assertMayTakeOver } from '../roles/assignment';
import { CallerPermissions } from '../roles/caller-permissions';
import { RoleRepository } from '../roles/role.repository';
import { TokenRevoker } from '../sessions/token-revoker';
import { TokenSessionRepository } from '../sessions/token-session.repository';
import { checkPasswordAttempt, invalidCurrentPassword } from '../users/password-attempt';
import { hasNoPassword, PasswordHasher } from '../users/password-hasher';
import { UserRepository } from '../users/user.repository';
import { SIGN_IN_ATTEMPTS, type SignInAttempts } from '../sign-in/sign-in-attempts';
import type { FactorState, PasskeyView } from './mfa.dto';
import { mfaEvent } from './mfa-events';
import { MfaRepository } from './mfa.repository';
import { PASSKEY_CHALLENGE_SECONDS, Passkeys } from './passkeys';
import { drawRecoveryCodes, recoveryCodeDigest } from './recovery-codes';
import { matchingTotpStep, newTotpSecret, otpauthUri } from './totp';

/** TokenRevoked's reason when an administrator removes every factor of a user. */
const MFA_RESET_REASON = 'mfa_reset';

const codeInvalid = (message = 'The code is not correct'): DomainError => new DomainError('MfaCodeInvalid', message);

const toPasskeyView = (row: WebauthnCredentialRow): PasskeyView => ({
  _id: row.id,
  name: row.name,
  created_at: row.createdAt.toISOString(),
  last_used_at: row.lastUsedAt ? row.lastUsedAt.toISOString() : null,
});

/**
 * How recent a sign-in proves a user who has no password, where the others send `current_password`:
 * long enough to enroll a factor after signing in, short enough that a token kept for hours does not.
 */
export const FRESH_SIGN_IN_SECONDS = 600;

/**
 * Who acts on a user's factors, and from where (the address counts failures of `current_password`);
 * the decision is the guard's on the routes that admit an administrator (`users.update.{id}`).
 */
export type FactorActor = RequestActor;

/**
 * The user's own factor routes (contract, "Second factors"): the user itself with an unscoped token,
 * proving `current_password` where the contract asks; an administrator may read the state and
 * remove factors. Secrets appear only in the answer that creates them.
 */
@Injectable()
export class MfaService {
  constructor(
    private readonly factors: MfaRepository,
    private readonly users: UserRepository,
    private readonly memberships: MembershipCache,
    private readonly hasher: PasswordHasher,
    private readonly passkeys: Passkeys,
    private readonly recorder: EventRecorder,
    private readonly revoker: TokenRevoker,
    private readonly sessions: TokenSessionRepository,
    private readonly permissions: CallerPermissions,
    private readonly roles: RoleRepository,
    @Inject(SIGN_IN_ATTEMPTS) private readonly attempts: SignInAttempts,
  ) {}

  async state(membershipId: string, userId: string): Promise<FactorState> {
    if (!(await this.users.findById(membershipId, userId))) throw userNotFound();
    const { mfa, credentials, recoveryCodesLeft } = await this.factors.findState(membershipId, userId);
    const enabledAt = mfa?.totpSecret ? mfa.totpEnabledAt : null;
    return {
      totp: enabledAt ? { enabled: true, created_at: enabledAt.toISOString() } : { enabled: false },
      webauthn: credentials.map(toPasskeyView),
      recovery_codes_left: recoveryCodesLeft,
    };
  }

  /** A new pending TOTP secret (replacing a pending one); an enabled one keeps working until the new one is confirmed. */
  async startTotp(actor: FactorActor, membershipId: string, userId: string, currentPassword: string | undefined) {
    const user = await this.self(actor, membershipId, userId, currentPassword, true);
    const membership = await this.memberships.get(membershipId);
    if (!membership) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    const secret = newTotpSecret();
    await this.factors.setPendingTotp(membershipId, userId, secret);
    return { secret, otpauth_uri: otpauthUri(secret, membership.name, user.username) };
  }

  /** The first code of the pending secret enables TOTP and answers 10 new recovery codes (the old ones void). */
  async confirmTotp(actor: FactorActor, membershipId: string, userId: string, code: string, currentPassword: string | undefined) {
    await this.self(actor, membershipId, userId, currentPassword, false);
    const { mfa } = await this.factors.findState(membershipId, userId);
    const pending = mfa?.totpPendingSecret;
    if (!pending) throw codeInvalid('No TOTP enrollment is pending: start one with POST .../mfa/totp');
    const attempt = this.attemptOf(membershipId, userId, actor.address);
    await this.attempts.assertOpen(attempt);
    const step = matchingTotpStep(pending, code);
    if (step === undefined) {
      await this.attempts.recordFailure(attempt);
      throw codeInvalid();
    }
    const recoveryCodes = drawRecoveryCodes();
    await this.recorder.transaction(async (record) => {
      if (!(await this.factors.confirmPendingTotp(membershipId, userId, pending, step))) throw codeInvalid('The TOTP enrollment was replaced: start again');
      await this.factors.replaceRecoveryCodes(membershipId, userId, recoveryCodes.map((c) => recoveryCodeDigest(userId, c)));
      record(mfaEvent('UserMfaEnabled', membershipId, userId, 'totp', actor.caller.id));
    });
    await this.attempts.recordSuccess(attempt);
    return { recovery_codes: recoveryCodes };
  }

  async deleteTotp(actor: FactorActor, membershipId: string, userId: string, currentPassword: string | undefined): Promise<void> {
    await this.selfOrAdministrator(actor, membershipId, userId, currentPassword);
    await this.recorder.transaction(async (record) => {
      if (!(await this.factors.deleteTotp(membershipId, userId))) throw new DomainError('NotFound', 'The user has no TOTP factor');
      await this.dropRecoveryCodesWithoutFactor(membershipId, userId);
      record(mfaEvent('UserMfaDisabled', membershipId, userId, 'totp', actor.caller.id));
    });
  }

  async passkeyOptions(actor: FactorActor, membershipId: string, userId: string, currentPassword: string | undefined) {
    const user = await this.self(actor, membershipId, userId, currentPassword, true);
    const membership = await this.memberships.get(membershipId);
    if (!membership) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    const { credentials } = await this.factors.findState(membershipId, userId);
    const challenge = this.passkeys.newChallenge();
    await this.factors.setRegistrationChallenge(membershipId, userId, challenge, new Date(Date.now() + PASSKEY_CHALLENGE_SECONDS * 1000));
    return this.passkeys.registrationOptions(membership.name, user, challenge, credentials);
  }

  async registerPasskey(
    actor: FactorActor,
    membershipId: string,
    userId: string,
    body: { name: string; response: Record<string, unknown>; current_password?: string },
  ) {
    await this.self(actor, membershipId, userId, body.current_password, false);
    // The library checks the shape; a response it cannot read fails like a wrong one.
    const response = body.response as unknown as RegistrationResponseJSON;
    const registered = await this.passkeys.verifyRegistration(response, (challenge) =>
      this.factors.takeRegistrationChallenge(membershipId, userId, challenge),
    );
    if (!registered) throw codeInvalid('The passkey registration could not be verified');
    const row = await this.recorder.transaction(async (record) => {
      const stored = await this.factors.insertCredential({ membershipId, userId, name: body.name, ...registered });
      record(mfaEvent('UserMfaEnabled', membershipId, userId, 'webauthn', actor.caller.id));
      return stored;
    });
    return { _id: row.id, name: row.name, created_at: row.createdAt.toISOString() };
  }

  async deletePasskey(actor: FactorActor, membershipId: string, userId: string, credentialId: string, currentPassword: string | undefined) {
    await this.selfOrAdministrator(actor, membershipId, userId, currentPassword);
    await this.recorder.transaction(async (record) => {
      if (!(await this.factors.deleteCredential(membershipId, userId, credentialId))) throw new DomainError('NotFound', 'The passkey does not exist');
      await this.dropRecoveryCodesWithoutFactor(membershipId, userId);
      record(mfaEvent('UserMfaDisabled', membershipId, userId, 'webauthn', actor.caller.id));
    });
  }

  /** 10 new recovery codes, the old ones void; only for a user with an enabled factor (they recover that factor). */
  async regenerateRecoveryCodes(actor: FactorActor, membershipId: string, userId: string, currentPassword: string | undefined) {
    await this.self(actor, membershipId, userId, currentPassword, true);
    if (!(await this.factors.hasEnabledFactor(membershipId, userId))) {
      throw validationFailure([{ field: 'recovery_codes', message: 'need an enabled second factor (TOTP or a passkey) first' }]);
    }
    const recoveryCodes = drawRecoveryCodes();
    await this.recorder.transaction(async (record) => {
      await this.factors.replaceRecoveryCodes(membershipId, userId, recoveryCodes.map((c) => recoveryCodeDigest(userId, c)));
      record(mfaEvent('UserMfaEnabled', membershipId, userId, 'recovery_codes', actor.caller.id));
    });
    return { recovery_codes: recoveryCodes };
  }

  /** The administrator's reset: every factor removed and every session of the user revoked, in one transaction. */
  async resetAll(actor: FactorActor, membershipId: string, userId: string): Promise<void> {
    if (actor.decision?.reason === 'own_record') {
      throw new DomainError('AccessDenied', 'Removing every factor of a user needs the users.update permission');
    }
    const user = await this.users.findById(membershipId, userId);
    if (!user) throw userNotFound();
    // With the factors gone, the password alone signs in: only a caller holding what the user holds may.
    await assertMayTakeOver(await this.permissions.granterOf(actor.caller), this.roles, membershipId, user);
    await this.recorder.transaction(async (record) => {
      await this.factors.deleteAllFactors(membershipId, userId);
      await this.revoker.revokeAllOfUser(record, membershipId, userId, actor.caller.id, MFA_RESET_REASON);
      record(mfaEvent('UserMfaDisabled', membershipId, userId, 'all', actor.caller.id));
    });
  }

  /** Recovery codes recover a factor: with none left enabled they would only be a second password. */
  private async dropRecoveryCodesWithoutFactor(membershipId: string, userId: string): Promise<void> {
    if (!(await this.factors.hasEnabledFactor(membershipId, userId))) await this.factors.deleteRecoveryCodes(membershipId, userId);
  }

  /** The routes only the user itself may call, with an unscoped token; `current_password` checked when sent or required. */
  private async self(actor: FactorActor, membershipId: string, userId: string, currentPassword: string | undefined, required: boolean): Promise<UserRow> {
    const { caller } = actor;
    // An id that names no user is 404 for everyone, as on every user route.
    const user = await this.users.findById(membershipId, userId);
    if (!user) throw userNotFound();
    if (caller.kind !== 'user' || caller.id !== userId) throw new DomainError('AccessDenied', 'Only the user itself manages its second factors');
    if (caller.scopes !== null) throw new DomainError('AccessDenied', 'Managing second factors needs an unscoped token');
    await this.checkCurrentPassword(user, currentPassword, required, actor);
    return user;
  }

  /** The removal routes: the user itself proving `current_password`, or an administrator holding `users.update.{id}`. */
  private async selfOrAdministrator(actor: FactorActor, membershipId: string, userId: string, currentPassword: string | undefined): Promise<void> {
    const { caller } = actor;
    if (caller.kind === 'user' && caller.id === userId) {
      await this.self(actor, membershipId, userId, currentPassword, true);
      return;
    }
    if (currentPassword !== undefined) {
      throw validationFailure([{ field: 'current_password', message: 'is sent only by users acting on their own factors' }]);
    }
    const user = await this.users.findById(membershipId, userId);
    if (!user) throw userNotFound();
    // Removing a user's only factor leaves its password alone to sign in, as resetAll does: the
    // same take-over rule applies to one factor as to all of them.
    await assertMayTakeOver(await this.permissions.granterOf(caller), this.roles, membershipId, user);
  }

  private async assertFreshSignIn({ caller }: FactorActor, membershipId: string): Promise<void> {
    const signedInAt = caller.kind === 'user' ? await this.sessions.findSignInTime(membershipId, caller.sessionId) : undefined;
    if (!signedInAt || Date.now() - signedInAt.getTime() > FRESH_SIGN_IN_SECONDS * 1000) {
      throw new DomainError(
        'AccessDenied',
        `You have no password: sign in again (a sign-in of the last ${FRESH_SIGN_IN_SECONDS / 60} minutes) to manage your second factors`,
      );
    }
  }

  private attemptOf(membershipId: string, userId: string, address: string) {
    return { membershipId, login: { userId }, address };
  }

  /**
   * A wrong current password is a sign-in failure of the login (contract, "Sign-in defenses"). A
   * user with no password (signed up through a provider) cannot send one where it is required: a
   * sign-in of the last FRESH_SIGN_IN_SECONDS proves it instead (its session's, not its token's).
   */
  private async checkCurrentPassword(user: UserRow, password: string | undefined, required: boolean, actor: FactorActor): Promise<void> {
    if (password === undefined) {
      if (!required) return;
      if (!hasNoPassword(user.passwordHash)) {
        throw validationFailure([{ field: 'current_password', message: 'is required to manage your own second factors' }]);
      }
      await this.assertFreshSignIn(actor, user.membershipId);
      return;
    }
    const attempt = this.attemptOf(user.membershipId, user.id, actor.address);
    if (!(await checkPasswordAttempt(this.attempts, this.hasher, attempt, user.passwordHash, password))) throw invalidCurrentPassword();
  }
}
