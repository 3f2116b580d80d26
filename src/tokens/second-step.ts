import type { UserRecord } from '../database/schema';
import type { SigningMembership } from '../sessions/token-session.repository';
import type { SessionMetadata } from './token.dto';

/**
 * A first sign-in step that succeeded: the right password at /generate-token, or a provider's
 * verified id token. `grant` names it (`{grant: "password"}`, `{grant: "provider", provider}`) and
 * `amr` holds the methods it proved (RFC 8176: `["pwd"]`, or none for a provider).
 */
export interface FirstSignInStep {
  membership: SigningMembership;
  user: UserRecord;
  metadata: SessionMetadata;
  grant: Readonly<Record<string, string>>;
  amr: readonly string[];
}

/**
 * The second step of sign-in, as tokens/ sees it (contract, "Second factors"). sign-in/ implements
 * it above this room and provides SECOND_STEP_GATE; without a provider every sign-in is one step.
 */
export interface SecondStepGate {
  /**
   * Resolves when the user may have a session now; throws `DomainError('MfaRequired')` (with the
   * `mfa_token`) when a second factor, or its enrollment, must come first.
   */
  requireSecondStep(first: FirstSignInStep): Promise<void>;
  /** Whether a session with these methods has passed the factor its user needs now (device approval). */
  passedSecondStep(membershipId: string, userId: string, amr: readonly string[] | null): Promise<boolean>;
}

export const SECOND_STEP_GATE = Symbol('SECOND_STEP_GATE');

/** The `amr` of a password sign-in without a second factor. */
export const PASSWORD_AMR: readonly string[] = Object.freeze(['pwd']);
