import { createSecretKey, type KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { type JwtModuleOptions, JwtService, type JwtVerifyOptions, TokenExpiredError } from '@nestjs/jwt';
import { isPossibleId } from '../common/ids';

/** Claims of the service's access and refresh tokens (the specification's list plus `sid`). */
export interface TokenClaims {
  sub: string;
  /** Membership id. */
  prn: string;
  jti: string;
  /** The sign-in session the token belongs to (every pair refreshed from it, every scoped token made from it). */
  sid: string;
  /**
   * The token record: the row that says whether this token is still valid. Tokens issued before
   * sessions existed have none; their `sid` names their record (see `peek`).
   */
  tid?: string;
  iss: string;
  aud: string;
  given_name?: string;
  family_name?: string;
  unique_name: string;
  email: string;
  /** Space-separated scopes; scoped tokens only. */
  scope?: string;
  /** How the session's person authenticated (RFC 8176: `pwd`, `otp`, `hwk`, `mfa`); absent after a provider sign-in alone. */
  amr?: string[];
  refresh_token?: true;
  iat: number;
  nbf: number;
  exp: number;
}

/** What a reset or activation token is for (contract "Account recovery"): never an access token. */
export type ChallengeTokenType = 'reset' | 'activation';

/** Claims of reset and activation tokens: no `sid`, so no token route can take them for a session. */
export interface ChallengeClaims {
  typ: ChallengeTokenType;
  sub: string;
  prn: string;
  jti: string;
  iss: string;
  aud: string;
  iat: number;
  nbf: number;
  exp: number;
}

type VerifyResult<C> = { ok: true; claims: C } | { ok: false; reason: 'invalid' | 'expired' };

/** Tokens larger than this are not even decoded. */
export const MAX_TOKEN_LENGTH = 8192;

const MAX_CACHED_KEYS = 10_000;

/**
 * What JwtModule is registered with: HS256 only, both ways. No module-wide secret: every token is
 * signed and verified with its membership's key, given per call.
 */
export const TOKEN_JWT_OPTIONS: JwtModuleOptions = {
  signOptions: { algorithm: 'HS256' },
  verifyOptions: { algorithms: ['HS256'] },
};

/**
 * @nestjs/jwt types a per-call verify key as a string or Buffer, yet hands it to
 * jsonwebtoken.verify unchanged, which takes a KeyObject as well (its sign option `privateKey` is
 * typed so). A string or Buffer would be tried as a PEM public key first and fail with a thrown
 * error on every token; the KeyObject made once per key skips that.
 */
function verifyWith(key: KeyObject, expected: { issuer: string; audience: string }): JwtVerifyOptions {
  const options: Omit<JwtVerifyOptions, 'publicKey'> & { publicKey: KeyObject } = { ...expected, publicKey: key };
  return options as unknown as JwtVerifyOptions;
}

/**
 * HS256 with the membership's secret_key, through @nestjs/jwt (jsonwebtoken underneath) with a
 * KeyObject made once per key: synchronous HMAC, about ten times cheaper per token than a
 * WebCrypto-based library. Without Nest (unit tests) it makes its own JwtService with the same options.
 */
@Injectable()
export class JwtCodec {
  private readonly keys = new Map<string, KeyObject>();

  constructor(private readonly jwt: JwtService = new JwtService(TOKEN_JWT_OPTIONS)) {}

  private keyFor(secretKey: string): KeyObject {
    let key = this.keys.get(secretKey);
    if (!key) {
      if (this.keys.size >= MAX_CACHED_KEYS) this.keys.clear();
      key = createSecretKey(Buffer.from(secretKey, 'utf8'));
      this.keys.set(secretKey, key);
    }
    return key;
  }

  sign(
    claims: Omit<TokenClaims, 'iat' | 'nbf' | 'exp'> | Omit<ChallengeClaims, 'iat' | 'nbf' | 'exp'>,
    issuedAt: number,
    lifetimeSeconds: number,
    secretKey: string,
  ): string {
    const payload = { ...claims, iat: issuedAt, nbf: issuedAt, exp: issuedAt + lifetimeSeconds };
    // jsonwebtoken keeps the payload's own iat; exp and nbf are given in the payload too.
    return this.jwt.sign(payload, { privateKey: this.keyFor(secretKey) });
  }

  /**
   * Reads the claims without checking anything, only to find which membership and token record
   * to load. Nothing read here decides anything before `verify` has checked the signature.
   */
  peek(token: string): { prn: string; tokenId: string } | null {
    if (token.length > MAX_TOKEN_LENGTH) return null;
    // Only the payload segment, decoded by hand: JwtService.decode also parses the header and costs three
    // times as much, and `verify` parses everything again anyway.
    const first = token.indexOf('.');
    const second = token.indexOf('.', first + 1);
    if (first <= 0 || second <= first + 1 || token.indexOf('.', second + 1) !== -1) return null;
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'));
    } catch {
      return null;
    }
    if (!claims || typeof claims !== 'object') return null;
    const { prn, sid, tid } = claims as { prn?: unknown; sid?: unknown; tid?: unknown };
    // Tokens issued before sessions were records name their record by sid alone.
    const tokenId = tid ?? sid;
    // Both are looked up next: ids that cannot exist stop here (contract, "Bounded work").
    if (typeof prn !== 'string' || typeof tokenId !== 'string' || !isPossibleId(prn) || !isPossibleId(tokenId)) return null;
    return { prn, tokenId };
  }

  /** 'expired' only when the signature is good and the only problem is the expiry. */
  verify(token: string, secretKey: string, expected: { issuer: string; audience: string }): VerifyResult<TokenClaims> {
    return this.decode(token, secretKey, expected, isTokenClaims);
  }

  /** A reset or activation token of exactly this `typ`; any other token, access tokens included, is 'invalid'. */
  verifyChallenge(token: string, secretKey: string, expected: { issuer: string; audience: string; typ: ChallengeTokenType }): VerifyResult<ChallengeClaims> {
    if (token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'invalid' };
    return this.decode(token, secretKey, expected, (payload): payload is ChallengeClaims => isChallengeClaims(payload, expected.typ));
  }

  private decode<C>(
    token: string,
    secretKey: string,
    expected: { issuer: string; audience: string },
    isClaims: (payload: unknown) => payload is C,
  ): VerifyResult<C> {
    let payload: unknown;
    try {
      payload = this.jwt.verify<object>(token, verifyWith(this.keyFor(secretKey), expected));
    } catch (error) {
      return { ok: false, reason: error instanceof TokenExpiredError ? 'expired' : 'invalid' };
    }
    if (!isClaims(payload)) return { ok: false, reason: 'invalid' };
    return { ok: true, claims: payload };
  }
}

function isChallengeClaims(payload: unknown, typ: ChallengeTokenType): payload is ChallengeClaims {
  if (!payload || typeof payload !== 'object') return false;
  const claims = payload as Record<string, unknown>;
  return (
    claims.typ === typ &&
    claims.sid === undefined &&
    typeof claims.sub === 'string' &&
    typeof claims.jti === 'string' &&
    typeof claims.prn === 'string' &&
    typeof claims.exp === 'number'
  );
}

function isTokenClaims(payload: unknown): payload is TokenClaims {
  if (!payload || typeof payload !== 'object') return false;
  const claims = payload as Record<string, unknown>;
  return (
    // Reset and activation tokens carry a `typ`; no access or refresh token does.
    claims.typ === undefined &&
    typeof claims.sub === 'string' &&
    typeof claims.jti === 'string' &&
    typeof claims.sid === 'string' &&
    (claims.tid === undefined || typeof claims.tid === 'string') &&
    typeof claims.prn === 'string' &&
    typeof claims.iat === 'number' &&
    typeof claims.exp === 'number'
  );
}
