import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import { newId } from '../common/ids';
import { MembershipCache } from '../memberships/membership-cache';
import type { FirstSignInStep, SecondStepGate } from '../tokens/second-step';
import { factorStanding } from './factor-standing';
import { MfaSignInRepository } from './mfa-sign-in.repository';
import { MfaRepository } from './mfa.repository';

/** An mfa_token lives 300 s (contract, "Second factors"). */
export const MFA_TOKEN_SECONDS = 300;
const MFA_TOKEN_BYTES = 32;

/** Second-step methods as `mfa_methods` names them. */
export type MfaMethodName = 'totp' | 'webauthn' | 'recovery_code';

/**
 * An mfa_token is `<membership id>.<32 random bytes, base64url>`: the membership scopes its lookup
 * (every repository method takes it first) and is no secret; the random part is. Stored as the
 * SHA-256 of the whole token, so the table never holds a usable one.
 */
export function mfaTokenDigest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function membershipOfMfaToken(token: string): string | undefined {
  const dot = token.indexOf('.');
  return dot > 0 ? token.slice(0, dot) : undefined;
}

/**
 * The gate tokens/ calls after a first step succeeded (SECOND_STEP_GATE): a user with an enabled
 * factor, or any user of a membership whose `mfa_policy` is `required`, gets `401 MfaRequired`
 * with a single-use mfa_token instead of a session.
 */
@Injectable()
export class MfaGate implements SecondStepGate {
  constructor(
    private readonly factors: MfaRepository,
    private readonly signIns: MfaSignInRepository,
    private readonly memberships: MembershipCache,
  ) {}

  async requireSecondStep(first: FirstSignInStep): Promise<void> {
    const membershipId = first.membership.id;
    const userId = first.user.id;
    const { enabled, required } = await factorStanding(this.factors, this.memberships, membershipId, userId);
    if (!enabled && !required) return;

    const methods: MfaMethodName[] = [];
    if (enabled) {
      const { mfa, credentials, recoveryCodesLeft } = await this.factors.findState(membershipId, userId);
      if (mfa?.totpSecret) methods.push('totp');
      if (credentials.length) methods.push('webauthn');
      if (recoveryCodesLeft > 0) methods.push('recovery_code');
    }
    const token = `${membershipId}.${randomBytes(MFA_TOKEN_BYTES).toString('base64url')}`;
    await this.signIns.insert({
      id: newId(),
      membershipId,
      userId,
      tokenDigest: mfaTokenDigest(token),
      grant: { ...first.grant },
      amr: [...first.amr],
      expiresAt: new Date(Date.now() + MFA_TOKEN_SECONDS * 1000),
    });
    throw new DomainError('MfaRequired', 'A second factor is required to finish signing in', undefined, undefined, {
      mfa_token: token,
      mfa_methods: methods,
      expires_in: MFA_TOKEN_SECONDS,
      ...(enabled ? {} : { enroll: ['totp'] }),
    });
  }

  async passedSecondStep(membershipId: string, userId: string, amr: readonly string[] | null): Promise<boolean> {
    if (amr?.includes('mfa')) return true;
    const { enabled, required } = await factorStanding(this.factors, this.memberships, membershipId, userId);
    return !enabled && !required;
  }
}
