import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { type JwtModuleOptions, JwtService } from '@nestjs/jwt';
import { calculateJwkThumbprint, errors, type JWK, type JWTPayload, jwtVerify } from 'jose';
import type { Algorithm } from 'jsonwebtoken';
import { BoundedCache } from '../common/bounded-cache';
import { DomainError } from '../common/errors';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { EventRecorder } from '../events/event-recorder';
import { MembershipCache } from '../memberships/membership-cache';
import { MembershipRepository } from '../memberships/membership.repository';
import { MAX_TOKEN_LENGTH } from '../tokens/jwt-codec';
import { type NewSigningKey, SigningKeyRepository } from './signing-key.repository';

/** The one algorithm of the OpenID Provider's tokens (contract: `id_token_signing_alg_values_supported ["ES256"]`). */
export const SIGNING_ALGORITHM = 'ES256';

/**
 * The longest a verified token's payload is remembered. A resource server or userinfo sees the same
 * access token many times in its life; its signature need be checked once. The record is still
 * read on every use (revocation is checked there), and a payload is never kept past its `exp`.
 */
const VERIFIED_TOKEN_TTL_MS = 60_000;

/** How long an imported key stays in memory unused; a kid names one key forever, so this only bounds memory. */
const IMPORTED_KEY_TTL_MS = 3_600_000;

/**
 * How long an instance signs with the current key it read: a code exchange signs two tokens, and
 * reading the key each time was two of its database round trips. Another instance's rotation is
 * seen within this time; tokens signed with the replaced key verify through its overlap anyway.
 */
const CURRENT_KEY_TTL_MS = 5_000;

/** The current key of a membership as the signer holds it. */
interface CurrentKey {
  id: string;
  algorithm: string;
  key: KeyObject;
}

/** The `typ` header of a token the OpenID Provider signs: RFC 9068 access tokens, or ID tokens (and others) as `JWT`. */
export type SignedTokenType = 'at+jwt' | 'JWT';

/** Why a presented token was not one of the issuer's: any of these makes it invalid, one answer for all. */
export class UnverifiableToken extends Error {
  /** True when the signature and the rest held and only the expiry did not (a logout hint may be expired). */
  readonly expired: boolean;

  constructor(message: string, options: { expired?: boolean } = {}) {
    super(message);
    this.expired = options.expired ?? false;
  }
}

/**
 * ES256 signing through @nestjs/jwt (jsonwebtoken underneath, node:crypto's synchronous ECDSA), as
 * the service's HS256 tokens are: 28 µs a signature against 90 µs on jose's WebCrypto path, and a
 * code exchange signs two (bench:oidc: exchange 0.87 → about 1.0-1.2 × oidc-provider). Verification
 * stays on jose: its WebCrypto ECDSA runs on libuv's thread pool, off the event loop, and userinfo
 * measured faster that way (about 1.0 ×) than with jsonwebtoken's synchronous check (about 0.8 ×).
 */
const ES256_JWT_OPTIONS: JwtModuleOptions = {
  signOptions: { algorithm: SIGNING_ALGORITHM },
  verifyOptions: { algorithms: [SIGNING_ALGORITHM] },
};

/** A public key as the JWKS lists it (RFC 7517). */
export interface PublicJwk {
  kty: string;
  crv: string;
  x: string;
  y: string;
  kid: string;
  alg: string;
  use: 'sig';
}

/** What a rotation answers: the new key's id and public half, and the key it retired. */
export interface RotatedKey {
  kid: string;
  alg: string;
  retired_kid: string | null;
  /** When the retired key leaves the JWKS. */
  retired_until: string | null;
}

function stringFields(jwk: JWK): Record<string, string> {
  return Object.fromEntries(Object.entries(jwk).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/**
 * A membership's ES256 signing keys as an OpenID Provider (docs/oidc.md, "Keys"). A membership's
 * first key is made on first use: memberships made before the feature have none, and an
 * insert that loses a race to another instance reads the winner's.
 */
@Injectable()
export class SigningKeys implements OnModuleDestroy {
  /** Imported public keys by membership and kid: importing a JWK costs about what a verification does. */
  private readonly imported: BoundedCache<KeyObject>;
  /** Each membership's current key, imported, for a few seconds (see CURRENT_KEY_TTL_MS). */
  private readonly current: BoundedCache<CurrentKey>;
  /** Payloads of tokens whose signature and claims were checked, by what was checked (see VERIFIED_TOKEN_TTL_MS). */
  private readonly verified: BoundedCache<Readonly<JWTPayload>>;
  private readonly jwt = new JwtService(ES256_JWT_OPTIONS);

  constructor(
    private readonly keys: SigningKeyRepository,
    private readonly memberships: MembershipCache,
    private readonly membershipRows: MembershipRepository,
    private readonly recorder: EventRecorder,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.imported = new BoundedCache({ maxEntries: config.cacheMaxEntries, ttlMs: IMPORTED_KEY_TTL_MS });
    this.current = new BoundedCache({ maxEntries: config.cacheMaxEntries, ttlMs: CURRENT_KEY_TTL_MS });
    this.verified = new BoundedCache({ maxEntries: config.cacheMaxEntries, ttlMs: VERIFIED_TOKEN_TTL_MS });
  }

  /** Stops the caches' sweep timers (application shutdown). */
  onModuleDestroy(): void {
    this.imported.close();
    this.current.close();
    this.verified.close();
  }

  /**
   * Signs `payload` with the membership's current key (made now if it has none), `kid` in the
   * header. A rotation takes effect at once on the instance that made it, and within
   * CURRENT_KEY_TTL_MS on the others (the replaced key stays in the JWKS far longer than that).
   */
  async sign(membershipId: string, payload: JWTPayload, typ: SignedTokenType): Promise<string> {
    const current = this.current.get(membershipId) ?? (await this.loadCurrent(membershipId));
    const algorithm = current.algorithm as Algorithm;
    // The payload carries its own iat and exp; jsonwebtoken keeps them.
    return this.jwt.sign(payload, { algorithm, privateKey: current.key, header: { alg: algorithm, kid: current.id, typ } });
  }

  /** The membership's current key, imported (made first when it has none), kept for CURRENT_KEY_TTL_MS. */
  private async loadCurrent(membershipId: string): Promise<CurrentKey> {
    let row = await this.keys.currentPrivate(membershipId);
    if (!row) {
      await this.keys.addCurrentIfNone(await newKey(membershipId));
      row = await this.keys.currentPrivate(membershipId);
      if (!row) throw new Error(`no signing key for membership ${membershipId}`);
    }
    const current = { id: row.id, algorithm: row.algorithm, key: createPrivateKey({ key: row.privateJwk, format: 'jwk' }) };
    this.current.set(membershipId, current);
    return current;
  }

  /**
   * The payload of a token this membership's issuer signed: ES256 with a key of its JWKS, the
   * given `typ`, `iss` the issuer, not expired (`exp` required). Anything else throws UnverifiableToken.
   */
  async verify(membershipId: string, token: string, options: { issuer: string; typ: SignedTokenType; audience?: string }): Promise<JWTPayload> {
    if (token.length > MAX_TOKEN_LENGTH) throw new UnverifiableToken('the token is too long');
    // Ids, URLs and typ hold no NUL: the key names exactly what was checked.
    const checked = `${membershipId}\0${options.issuer}\0${options.typ}\0${options.audience ?? ''}\0${token}`;
    const remembered = this.verified.get(checked);
    if (remembered && (remembered.exp ?? 0) * 1000 > Date.now()) return { ...remembered };
    const payload = await this.verifyUncached(membershipId, token, options);
    const lifetimeMs = (payload.exp ?? 0) * 1000 - Date.now();
    if (lifetimeMs > 0) this.verified.set(checked, Object.freeze({ ...payload }), Math.min(lifetimeMs, VERIFIED_TOKEN_TTL_MS));
    return payload;
  }

  private async verifyUncached(membershipId: string, token: string, options: { issuer: string; typ: SignedTokenType; audience?: string }): Promise<JWTPayload> {
    try {
      const { payload } = await jwtVerify(token, (header) => this.verificationKey(membershipId, header.kid), {
        algorithms: [SIGNING_ALGORITHM],
        issuer: options.issuer,
        typ: options.typ,
        audience: options.audience,
        requiredClaims: ['exp', 'iat'],
      });
      return payload;
    } catch (error) {
      if (error instanceof UnverifiableToken) throw error;
      throw new UnverifiableToken(error instanceof Error ? error.message : 'invalid token', { expired: error instanceof errors.JWTExpired });
    }
  }

  /** The public key `kid` names among the membership's verification keys (an unknown kid reads the table again). */
  private async verificationKey(membershipId: string, kid: string | undefined): Promise<KeyObject> {
    if (!kid) throw new UnverifiableToken('the token names no key');
    const cacheKey = `public:${membershipId}:${kid}`;
    const cached = this.imported.get(cacheKey);
    if (cached) return cached;
    const listed = (await this.keys.verificationKeys(membershipId)).find((key) => key.id === kid);
    if (!listed) throw new UnverifiableToken('the token names an unknown key');
    const key = createPublicKey({ key: listed.publicJwk, format: 'jwk' });
    this.imported.set(cacheKey, key);
    return key;
  }

  /** The public keys of the membership's JWKS: the current key (made now if none) and retired keys within their overlap. */
  async jwks(membershipId: string): Promise<{ keys: PublicJwk[] }> {
    await this.requireIssuer(membershipId);
    let listed = await this.keys.verificationKeys(membershipId);
    if (listed.length === 0) {
      await this.keys.addCurrentIfNone(await newKey(membershipId));
      listed = await this.keys.verificationKeys(membershipId);
    }
    return { keys: listed.map((key) => ({ ...(key.publicJwk as Omit<PublicJwk, 'kid' | 'alg' | 'use'>), kid: key.id, alg: key.algorithm, use: 'sig' })) };
  }

  /** An issuer exists for every membership and for nothing else: 404 MembershipNotFound. */
  async requireIssuer(membershipId: string): Promise<void> {
    if (!(await this.memberships.get(membershipId))) {
      throw new DomainError('MembershipNotFound', 'The membership does not exist');
    }
  }

  /**
   * `POST /memberships/{m}/signing-keys/rotate`: a new current key; the old one stays in the JWKS for
   * twice the longest token lifetime, so every token it signed still verifies. `SigningKeyRotated`
   * names the two kids (never a private value).
   */
  async rotate(membershipId: string, utilizerId: string): Promise<RotatedKey> {
    // Read fresh, not from the instance's cache: another instance may have lengthened the lifetimes
    // a moment ago, and every token signed with the retired key must still verify.
    const lifetimes = await this.membershipRows.findById(membershipId);
    if (!lifetimes) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    const keepSeconds = 2 * Math.max(lifetimes.expiresIn, lifetimes.refreshTokenExpiresIn);
    const key = await newKey(membershipId);
    const retiredKid = await this.recorder.transaction(async (record) => {
      const retired = await this.keys.rotate(key, keepSeconds);
      record({ membershipId, eventType: 'SigningKeyRotated', utilizerId, document: { kid: key.id, alg: key.algorithm, retired_kid: retired ?? null } });
      return retired;
    });
    // This instance signs with the new key from now on.
    this.current.delete(membershipId);
    return {
      kid: key.id,
      alg: key.algorithm,
      retired_kid: retiredKid ?? null,
      retired_until: retiredKid ? new Date(Date.now() + keepSeconds * 1000).toISOString() : null,
    };
  }
}

/** A fresh P-256 key pair; its kid is the public key's RFC 7638 thumbprint. */
async function newKey(membershipId: string): Promise<NewSigningKey> {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = publicKey.export({ format: 'jwk' });
  return {
    id: await calculateJwkThumbprint(publicJwk),
    membershipId,
    algorithm: SIGNING_ALGORITHM,
    publicJwk: stringFields(publicJwk),
    privateJwk: stringFields(privateKey.export({ format: 'jwk' })),
  };
}
