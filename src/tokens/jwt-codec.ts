import { createSecretKey, type KeyObject } from 'node:crypto';
import { decodeJwt, errors, jwtVerify, SignJWT, type JWTPayload } from 'jose';

/** Claims of the service's access and refresh tokens (the specification's list plus `sid`). */
export interface TokenClaims extends JWTPayload {
  sub: string;
  /** Membership id. */
  prn: string;
  jti: string;
  /** Token session id: the row that says whether this token is still valid. */
  sid: string;
  iss: string;
  aud: string;
  given_name?: string;
  family_name?: string;
  unique_name: string;
  email: string;
  /** Space-separated scopes; scoped tokens only. */
  scope?: string;
  refresh_token?: true;
  iat: number;
  nbf: number;
  exp: number;
}

/** Tokens larger than this are not even decoded. */
export const MAX_TOKEN_LENGTH = 8192;

const MAX_CACHED_KEYS = 10_000;

/**
 * HS256 with the membership's secret_key. Keys are turned into KeyObjects once and reused:
 * verifying with a KeyObject avoids re-importing the secret on every request.
 */
export class JwtCodec {
  private readonly keys = new Map<string, KeyObject>();

  private keyFor(secretKey: string): KeyObject {
    let key = this.keys.get(secretKey);
    if (!key) {
      if (this.keys.size >= MAX_CACHED_KEYS) this.keys.clear();
      key = createSecretKey(Buffer.from(secretKey, 'utf8'));
      this.keys.set(secretKey, key);
    }
    return key;
  }

  sign(claims: Omit<TokenClaims, 'iat' | 'nbf' | 'exp'>, issuedAt: number, lifetimeSeconds: number, secretKey: string): Promise<string> {
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuedAt(issuedAt)
      .setNotBefore(issuedAt)
      .setExpirationTime(issuedAt + lifetimeSeconds)
      .sign(this.keyFor(secretKey));
  }

  /**
   * Reads the claims without checking anything, only to find which membership and session to
   * load. Nothing read here decides anything before `verify` has checked the signature.
   */
  peek(token: string): { prn: string; sid: string } | null {
    if (token.length > MAX_TOKEN_LENGTH) return null;
    try {
      const claims = decodeJwt(token);
      if (typeof claims.prn !== 'string' || typeof claims.sid !== 'string') return null;
      if (claims.prn.length > 64 || claims.sid.length > 64) return null;
      return { prn: claims.prn, sid: claims.sid };
    } catch {
      return null;
    }
  }

  /** 'expired' only when the signature is good and the only problem is the expiry. */
  async verify(
    token: string,
    secretKey: string,
    expected: { issuer: string; audience: string },
  ): Promise<{ ok: true; claims: TokenClaims } | { ok: false; reason: 'invalid' | 'expired' }> {
    try {
      const { payload } = await jwtVerify(token, this.keyFor(secretKey), {
        algorithms: ['HS256'],
        issuer: expected.issuer,
        audience: expected.audience,
        requiredClaims: ['sub', 'jti', 'iat', 'exp'],
      });
      return { ok: true, claims: payload as TokenClaims };
    } catch (error) {
      return { ok: false, reason: error instanceof errors.JWTExpired ? 'expired' : 'invalid' };
    }
  }
}
