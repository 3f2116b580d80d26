import { Inject, Injectable } from '@nestjs/common';
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import { DomainError } from '../common/errors';
import { RequestTransaction } from '../common/request-transaction';
import { isPossibleId } from '../common/ids';
import { validationFailure } from '../common/validation';
import type { MfaSignInRow } from '../database/schema';
import { EventRecorder } from '../events/event-recorder';
import { MembershipCache } from '../memberships/membership-cache';
import { MembershipRepository } from '../memberships/membership.repository';
import type { SessionMetadata, TokenResponse } from '../tokens/token.dto';
import { SignInSessions } from '../tokens/sign-in-sessions';
import { UserRepository } from '../users/user.repository';
import { SIGN_IN_ATTEMPTS, type SignInAttempt, type SignInAttempts } from '../sign-in/sign-in-attempts';
import type { SecondStepDto } from './mfa.dto';
import { mfaEvent } from './mfa-events';
import { membershipOfMfaToken, mfaTokenDigest } from './mfa-gate';
import { MAX_MFA_ATTEMPTS, MfaSignInRepository } from './mfa-sign-in.repository';
import { MfaRepository } from './mfa.repository';
import { Passkeys } from './passkeys';
import { drawRecoveryCodes, recoveryCodeDigest } from './recovery-codes';
import { matchingTotpStep, newTotpSecret, otpauthUri } from './totp';

/** One answer for every token that cannot be used: unknown, forged, used, expired or out of attempts. */
const invalidMfaToken = (): DomainError => new DomainError('InvalidToken', 'The mfa_token is not valid');
const codeInvalid = (): DomainError => new DomainError('MfaCodeInvalid', 'The second factor is not correct');

/** RFC 8176 method of each factor: a TOTP code and a recovery code are both one-time passwords. */
const FACTOR_AMR = { totp: 'otp', recovery_code: 'otp', webauthn: 'hwk' } as const;
type Factor = keyof typeof FACTOR_AMR;

/** A sign-in's second step as it went: the recovery codes of an enrollment, the events to record. */
interface PassedFactor {
  recoveryCodes?: string[];
  events: ReturnType<typeof mfaEvent>[];
  /** A change the pass makes once the mfa_token is used up (an enrollment), so that only the request that used it makes it. */
  apply?: () => Promise<void>;
}

/**
 * The second step of sign-in (contract, "Second factors"): `POST /generate-token/mfa` with the
 * mfa_token of a `401 MfaRequired` and one factor opens the session; its helpers give passkey
 * options and, under `mfa_policy: required`, a TOTP secret to enroll.
 */
@Injectable()
export class SecondStepService {
  constructor(
    private readonly signIns: MfaSignInRepository,
    private readonly factors: MfaRepository,
    private readonly passkeys: Passkeys,
    private readonly users: UserRepository,
    private readonly memberships: MembershipRepository,
    private readonly membershipCache: MembershipCache,
    private readonly signInSessions: SignInSessions,
    private readonly recorder: EventRecorder,
    private readonly transaction: RequestTransaction,
    @Inject(SIGN_IN_ATTEMPTS) private readonly attempts: SignInAttempts,
  ) {}

  /** The live sign-in of a presented token, or 401 InvalidToken; nothing counted. */
  private async liveSignIn(token: string): Promise<MfaSignInRow> {
    const membershipId = membershipOfMfaToken(token);
    if (!membershipId || !isPossibleId(membershipId)) throw invalidMfaToken();
    const row = await this.signIns.findLive(membershipId, mfaTokenDigest(token));
    if (!row) throw invalidMfaToken();
    return row;
  }

  async complete(body: SecondStepDto, metadata: SessionMetadata, address: string): Promise<TokenResponse & { recovery_codes?: string[] }> {
    const factor = onlyFactor(body);
    const found = await this.liveSignIn(body.mfa_token);
    const attempt: SignInAttempt = { membershipId: found.membershipId, login: { userId: found.userId }, address };
    await this.attempts.assertOpen(attempt);
    // Counted before any compare, in the statement that checks the count.
    const signIn = await this.signIns.countAttempt(found.membershipId, found.tokenDigest);
    if (!signIn) throw invalidMfaToken();

    // Single use: of two requests with right factors, one opens the session. The factor is used up
    // in the same transaction as the token, so the loser's is given back (a recovery code sent
    // twice in parallel, or two of them, costs one).
    const passed = await this.transaction.run(async () => {
      const right = await this.check(signIn, factor, body);
      if (!right) return undefined;
      if (!(await this.signIns.delete(signIn.membershipId, signIn.id))) throw invalidMfaToken();
      // Read once the token is used up: a user-wide change that commits from here on could no
      // longer end this sign-in (its token is gone), so the session opens only while the user
      // still has this password (a change waiting for the token's lock has not committed it yet).
      return { ...right, user: await this.users.findById(signIn.membershipId, signIn.userId) };
    });
    if (!passed) {
      await this.attempts.recordFailure(attempt);
      if (signIn.attempts >= MAX_MFA_ATTEMPTS) {
        await this.signIns.delete(signIn.membershipId, signIn.id);
        throw invalidMfaToken();
      }
      throw codeInvalid();
    }
    await this.attempts.recordSuccess(attempt);

    const { user } = passed;
    const membership = await this.memberships.findById(signIn.membershipId);
    if (!membership || !user) throw invalidMfaToken();
    if (passed.events.length || passed.apply) {
      await this.recorder.transaction(async (record) => {
        await passed.apply?.();
        for (const event of passed.events) record(event);
      });
    }
    const amr = [...signIn.amr, FACTOR_AMR[factor], 'mfa'];
    const response = await this.signInSessions.completeSecondStep(membership, user, metadata, signIn.grant, amr, user.passwordHash);
    return passed.recoveryCodes ? { ...response, recovery_codes: passed.recoveryCodes } : response;
  }

  /** Whether the factor is right; undefined when it is not. Right factors are used up here (step, code, challenge). */
  private async check(signIn: MfaSignInRow, factor: Factor, body: SecondStepDto): Promise<PassedFactor | undefined> {
    const { membershipId, userId } = signIn;
    if (factor === 'totp') return this.checkTotp(signIn, body.totp ?? '');
    if (factor === 'recovery_code') {
      if (!(await this.factors.useRecoveryCode(membershipId, userId, recoveryCodeDigest(userId, body.recovery_code ?? '')))) return undefined;
      return { events: [mfaEvent('UserMfaRecoveryCodeUsed', membershipId, userId, 'recovery_codes', userId)] };
    }
    return this.checkPasskey(signIn, body.webauthn ?? {});
  }

  private async checkTotp(signIn: MfaSignInRow, code: string): Promise<PassedFactor | undefined> {
    const { membershipId, userId } = signIn;
    const { mfa } = await this.factors.findState(membershipId, userId);
    if (mfa?.totpSecret) {
      const step = matchingTotpStep(mfa.totpSecret, code);
      if (step === undefined || !(await this.factors.acceptTotpStep(membershipId, userId, mfa.totpSecret, step))) return undefined;
      return { events: [] };
    }
    // Enrollment at sign-in (mfa_policy: required): the first code of the offered secret enables it.
    if (!signIn.enrollSecret || (await this.factors.hasEnabledFactor(membershipId, userId))) return undefined;
    const step = matchingTotpStep(signIn.enrollSecret, code);
    if (step === undefined) return undefined;
    const secret = signIn.enrollSecret;
    const recoveryCodes = drawRecoveryCodes();
    return {
      recoveryCodes,
      events: [mfaEvent('UserMfaEnabled', membershipId, userId, 'totp', userId)],
      apply: async () => {
        // Another sign-in of the user enrolled meanwhile: its secret stays, and this one (its
        // token used up, nothing recorded) signs in again with that factor.
        if (!(await this.factors.enableTotp(membershipId, userId, secret, step))) throw codeInvalid();
        await this.factors.replaceRecoveryCodes(membershipId, userId, recoveryCodes.map((c) => recoveryCodeDigest(userId, c)));
      },
    };
  }

  private async checkPasskey(signIn: MfaSignInRow, assertion: Record<string, unknown>): Promise<PassedFactor | undefined> {
    const { membershipId, userId } = signIn;
    if (!signIn.webauthnChallenge) return undefined;
    const { credentials } = await this.factors.findState(membershipId, userId);
    const credential = credentials.find((c) => c.credentialId === assertion.id);
    if (!credential) return undefined;
    const newCounter = await this.passkeys.verifyAuthentication(
      assertion as unknown as AuthenticationResponseJSON,
      (challenge) => this.signIns.takeWebauthnChallenge(membershipId, signIn.id, challenge),
      credential,
    );
    if (newCounter === undefined) return undefined;
    if (!(await this.factors.recordCredentialUse(membershipId, credential.id, credential.counter, newCounter))) return undefined;
    return { events: [] };
  }

  /** Options for a passkey assertion of this sign-in; a new challenge replaces the previous one. */
  async passkeyOptions(token: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const signIn = await this.liveSignIn(token);
    const { credentials } = await this.factors.findState(signIn.membershipId, signIn.userId);
    if (!credentials.length) throw validationFailure([{ field: 'mfa_token', message: 'the user has no passkey' }]);
    const challenge = this.passkeys.newChallenge();
    await this.signIns.setWebauthnChallenge(signIn.membershipId, signIn.id, challenge);
    return this.passkeys.authenticationOptions(challenge, credentials);
  }

  /** Under `mfa_policy: required`, a user without a factor gets a TOTP secret to enroll (replacing an earlier offer). */
  async enrollTotp(token: string): Promise<{ secret: string; otpauth_uri: string }> {
    const signIn = await this.liveSignIn(token);
    // One at a time: in a request transaction they may query its one client (ambientDatabase).
    const membership = await this.membershipCache.get(signIn.membershipId);
    const user = await this.users.findById(signIn.membershipId, signIn.userId);
    const enabled = await this.factors.hasEnabledFactor(signIn.membershipId, signIn.userId);
    if (!membership || !user) throw invalidMfaToken();
    if (enabled) throw validationFailure([{ field: 'mfa_token', message: 'the user already has a second factor: use it' }]);
    const secret = newTotpSecret();
    await this.signIns.setEnrollSecret(signIn.membershipId, signIn.id, secret);
    return { secret, otpauth_uri: otpauthUri(secret, membership.name, user.username) };
  }
}

/** Exactly one of totp, recovery_code, webauthn. */
function onlyFactor(body: SecondStepDto): Factor {
  const sent = (['totp', 'recovery_code', 'webauthn'] as const).filter((name) => body[name] !== undefined);
  if (sent.length !== 1) {
    throw validationFailure([{ field: 'totp', message: 'send exactly one of totp, recovery_code, webauthn' }]);
  }
  return sent[0];
}
