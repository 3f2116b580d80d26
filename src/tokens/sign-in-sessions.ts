import { Inject, Injectable, Optional } from '@nestjs/common';
import { DomainError, invalidCredentials, userInactive } from '../common/errors';
import type { UserRecord } from '../database/schema';
import type { SigningMembership } from '../sessions/token-session.repository';
import { IssuedTokenStore, tokenGeneratedEvent } from './issued-token-store';
import { PasswordSignIn } from './password-sign-in';
import { PASSWORD_AMR, SECOND_STEP_GATE, type SecondStepGate } from './second-step';
import { TokenIssuer } from './token-issuer';
import type { SessionMetadata, TokenResponse } from './token.dto';

/** A second step whose user was changed (a new password, frozen, deleted) after its token was used up: the change ended it. */
const signInEnded = (): DomainError => new DomainError('InvalidToken', 'A change to the user ended this sign-in meanwhile: sign in again');

/**
 * Opens sign-in sessions, each with its token pair and TokenGenerated: after the right password,
 * for a user an external provider verified, and after a passed second step. The first two ask the
 * second step (SECOND_STEP_GATE) before anything is issued.
 */
@Injectable()
export class SignInSessions {
  constructor(
    private readonly passwords: PasswordSignIn,
    private readonly issuer: TokenIssuer,
    private readonly issued: IssuedTokenStore,
    @Optional() @Inject(SECOND_STEP_GATE) private readonly secondStep?: SecondStepGate,
  ) {}

  /** Sign-in with a password (`/generate-token`); its failures are PasswordSignIn's. */
  async signIn(membershipId: string | undefined, login: string | undefined, password: string | undefined, metadata: SessionMetadata): Promise<TokenResponse> {
    const { membership, user, attempt, passwordHash } = await this.passwords.authenticate(membershipId, login, password, metadata);
    // Only after the right password: a guesser learns nothing from the second step. When one is
    // due (MfaRequired), the login's attempt stays counted until the second step passes.
    try {
      await this.secondStep?.requireSecondStep({ membership, user, metadata, grant: { grant: 'password' }, amr: PASSWORD_AMR });
    } catch (error) {
      await this.passwords.signInContinues(attempt);
      throw error;
    }
    await this.passwords.signInCompleted(attempt);

    const issued = this.issuer.pair(membership, user, metadata, { scopes: null, amr: PASSWORD_AMR });
    // The user was deleted, frozen or given a new password while its password was checked: no
    // session, as for a sign-in just after (else one would outlive the change's revocation).
    if (!(await this.issued.store(issued, [tokenGeneratedEvent(user, issued.response)], undefined, passwordHash))) throw invalidCredentials();
    return issued.response;
  }

  /**
   * A new session for a user whose identity something else established (an external provider):
   * `grant` is added to the TokenGenerated document.
   */
  async signInVerified(membership: SigningMembership, user: UserRecord, metadata: SessionMetadata, grant: Record<string, string>): Promise<TokenResponse> {
    if (!user.isActive) throw userInactive();
    // The provider's own MFA claims are not trusted: a local factor is asked as after a password.
    await this.secondStep?.requireSecondStep({ membership, user, metadata, grant, amr: [] });
    const issued = this.issuer.pair(membership, user, metadata);
    const generated = tokenGeneratedEvent(user, issued.response);
    if (!(await this.issued.store(issued, [{ ...generated, document: { ...generated.document, ...grant } }]))) throw userInactive();
    return issued.response;
  }

  /**
   * A sign-in whose second step passed (second-factors/ calls it after checking the factor): a new
   * session carrying `amr`; TokenGenerated adds the first step's grant and `amr`. `passwordHash` is
   * the user's hash as read once the step's token was used up: a user-wide change committed since
   * then (a new password, a freeze, a deletion) opens nothing, as it would have ended the token.
   */
  async completeSecondStep(
    membership: SigningMembership,
    user: UserRecord,
    metadata: SessionMetadata,
    grant: Readonly<Record<string, string>>,
    amr: readonly string[],
    passwordHash: string,
  ): Promise<TokenResponse> {
    if (!user.isActive) throw userInactive();
    const issued = this.issuer.pair(membership, user, metadata, { scopes: null, amr });
    const generated = tokenGeneratedEvent(user, issued.response);
    const events = [{ ...generated, document: { ...generated.document, ...grant, amr: [...amr] } }];
    if (!(await this.issued.store(issued, events, undefined, passwordHash))) throw signInEnded();
    return issued.response;
  }

  /** Device approval needs a session that passed the second factor its user has (or its membership requires). */
  async assertPassedSecondStep(membershipId: string, userId: string, amr: readonly string[] | null): Promise<void> {
    if (this.secondStep && !(await this.secondStep.passedSecondStep(membershipId, userId, amr))) {
      throw new DomainError('AccessDenied', 'This needs a session that passed its second factor: sign in again with it');
    }
  }
}
