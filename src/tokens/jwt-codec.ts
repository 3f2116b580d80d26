import { createSecretKey, type KeyObject } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { type JwtModuleOptions, JwtService, type JwtVerifyOptions, TokenExpiredError } from '@nestjs/jwt';
import { BoundedCache } from '../common/bounded-cache';
import { isPossibleId } from '../common/ids';
import { APP_CONFIG, type AppConfig } from '../config/config';

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
 * How long the check of an access or refresh token is remembered, by the token's text (never past
 * its `exp`). What is remembered is only what the token's text and its membership's key decide
 * (signature, issuer, audience, times, claim types); the token's record (revocation, its session,
 * its user) is read on every use, so a revocation still takes effect at the next request.
 */
const VERIFIED_TOKEN_TTL_MS = 60_000;

/** A token whose signature and claims were checked, and what they were checked against. */
interface VerifiedToken {
  claims: Readonly<TokenClaims>;
  key: KeyObject;
  issuer: string;
  audience: string;
}

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
export class JwtCodec implements OnModuleDestroy {
  private readonly keys = new Map<string, KeyObject>();
  /** Tokens checked lately (VERIFIED_TOKEN_TTL_MS): a client sends the same access token until it expires. */
  private readonly verified: BoundedCache<VerifiedToken>;

  constructor(
    private readonly jwt: JwtService = new JwtService(TOKEN_JWT_OPTIONS),
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'cacheMaxEntries'> = { cacheMaxEntries: 10_000 },
  ) {
    this.verified = new BoundedCache({ maxEntries: config.cacheMaxEntries, ttlMs: VERIFIED_TOKEN_TTL_MS });
  }

  /** Stops the cache's sweep timer (application shutdown). */
  onModuleDestroy(): void {
    this.verified.close();
  }

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
    // A token checked lately was peeked at then: its claims are at hand, already parsed.
    const remembered = this.verified.get(token);
    if (remembered) return recordOf(remembered.claims);
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
    return recordOf(claims);
  }

  /**
   * 'expired' only when the signature is good and the only problem is the expiry. A token checked
   * in the last minute against the same key, issuer and audience is not checked again while its
   * times still hold: its HMAC and JSON parsing were a tenth of a Bearer request's CPU.
   */
  verify(token: string, secretKey: string, expected: { issuer: string; audience: string }): VerifyResult<TokenClaims> {
    const key = this.keyFor(secretKey);
    const remembered = this.verified.get(token);
    if (remembered && remembered.key === key && remembered.issuer === expected.issuer && remembered.audience === expected.audience && isCurrent(remembered.claims)) {
      return { ok: true, claims: remembered.claims };
    }
    const result = this.decode(token, key, expected, isTokenClaims);
    if (result.ok) {
      const claims = deepFreeze(result.claims);
      const lifetimeMs = claims.exp * 1000 - Date.now();
      if (lifetimeMs > 0) this.verified.set(token, { claims, key, ...expected }, Math.min(lifetimeMs, VERIFIED_TOKEN_TTL_MS));
      return { ok: true, claims };
    }
    return result;
  }

  /** A reset or activation token of exactly this `typ`; any other token, access tokens included, is 'invalid'. */
  verifyChallenge(token: string, secretKey: string, expected: { issuer: string; audience: string; typ: ChallengeTokenType }): VerifyResult<ChallengeClaims> {
    if (token.length > MAX_TOKEN_LENGTH) return { ok: false, reason: 'invalid' };
    return this.decode(token, this.keyFor(secretKey), expected, (payload): payload is ChallengeClaims => isChallengeClaims(payload, expected.typ));
  }

  private decode<C>(
    token: string,
    key: KeyObject,
    expected: { issuer: string; audience: string },
    isClaims: (payload: unknown) => payload is C,
  ): VerifyResult<C> {
    let payload: unknown;
    try {
      payload = this.jwt.verify<object>(token, verifyWith(key, expected));
    } catch (error) {
      return { ok: false, reason: error instanceof TokenExpiredError ? 'expired' : 'invalid' };
    }
    if (!isClaims(payload)) return { ok: false, reason: 'invalid' };
    return { ok: true, claims: payload };
  }
}

/** The membership and token record a token names, or null when they cannot be ids. */
function recordOf({ prn, sid, tid }: { prn?: unknown; sid?: unknown; tid?: unknown }): { prn: string; tokenId: string } | null {
  // Tokens issued before sessions were records name their record by sid alone.
  const tokenId = tid ?? sid;
  // Both are looked up next: ids that cannot exist stop here (contract, "Bounded work").
  if (typeof prn !== 'string' || typeof tokenId !== 'string' || !isPossibleId(prn) || !isPossibleId(tokenId)) return null;
  return { prn, tokenId };
}

/** What jsonwebtoken checks of the times (no clock tolerance): not before `nbf`, and before `exp`. */
function isCurrent(claims: Readonly<TokenClaims>): boolean {
  const now = Math.floor(Date.now() / 1000);
  return now < claims.exp && (claims.nbf === undefined || claims.nbf <= now);
}

/** Claims shared by every request that presents the token: nobody may change them. */
function deepFreeze(claims: TokenClaims): Readonly<TokenClaims> {
  if (claims.amr) Object.freeze(claims.amr);
  return Object.freeze(claims);
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
