import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../common/errors';
import { newId } from '../common/ids';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { MembershipRow } from '../database/schema';
import { type ChallengeClaims, type ChallengeTokenType, JwtCodec } from '../tokens/jwt-codec';

export interface IssuedChallengeToken {
  token: string;
  jti: string;
  expiresAt: Date;
  /** Its lifetime in seconds, as the mail values and the OTP exchange's answer give it. */
  expiresIn: number;
}

const invalid = (): DomainError => new DomainError('InvalidToken', 'The token is not valid');

/**
 * Reset and activation tokens (contract "Account recovery"): HS256 with the membership's secret
 * key, a `typ`, no `sid`, living RESET_TOKEN_EXPIRES_IN or ACTIVATION_TOKEN_EXPIRES_IN. The token
 * itself is never stored; its `jti` is the user's pending one.
 */
@Injectable()
export class ChallengeTokens {
  constructor(
    private readonly codec: JwtCodec,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  issue(membership: Pick<MembershipRow, 'id' | 'name' | 'slug' | 'secretKey'>, userId: string, typ: ChallengeTokenType): IssuedChallengeToken {
    const lifetimeSeconds = typ === 'reset' ? this.config.resetTokenExpiresIn : this.config.activationTokenExpiresIn;
    const jti = newId();
    const issuedAt = Math.floor(Date.now() / 1000);
    const token = this.codec.sign({ typ, sub: userId, prn: membership.id, jti, iss: membership.name, aud: membership.slug }, issuedAt, lifetimeSeconds, membership.secretKey);
    return { token, jti, expiresAt: new Date((issuedAt + lifetimeSeconds) * 1000), expiresIn: lifetimeSeconds };
  }

  /** Signature, `typ`, membership and expiry: 401 InvalidToken, or TokenWasExpired when only the expiry fails. */
  verify(membership: Pick<MembershipRow, 'id' | 'name' | 'slug' | 'secretKey'>, token: string, typ: ChallengeTokenType): ChallengeClaims {
    const verified = this.codec.verifyChallenge(token, membership.secretKey, { issuer: membership.name, audience: membership.slug, typ });
    if (!verified.ok) {
      if (verified.reason === 'expired') throw new DomainError('TokenWasExpired', 'The token has expired');
      throw invalid();
    }
    if (verified.claims.prn !== membership.id) throw invalid();
    return verified.claims;
  }
}

export const invalidChallengeToken = invalid;
