import { generateKeyPairSync } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { DomainError } from '../common/errors';
import { isPossibleId } from '../common/ids';
import { EventRecorder } from '../events/event-recorder';
import { type NewSigningKey, SigningKeyRepository } from './signing-key.repository';

/** The one algorithm of the OpenID Provider's tokens (contract: `id_token_signing_alg_values_supported ["ES256"]`). */
export const SIGNING_ALGORITHM = 'ES256';

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
export class SigningKeys {
  constructor(
    private readonly keys: SigningKeyRepository,
    private readonly recorder: EventRecorder,
  ) {}

  /** The public keys of the membership's JWKS: the current key (made now if none) and retired keys within their overlap. */
  async jwks(membershipId: string): Promise<{ keys: PublicJwk[] }> {
    if (!isPossibleId(membershipId) || !(await this.keys.tokenLifetimes(membershipId))) {
      throw new DomainError('MembershipNotFound', 'The membership does not exist');
    }
    let listed = await this.keys.verificationKeys(membershipId);
    if (listed.length === 0) {
      await this.keys.addCurrentIfNone(await newKey(membershipId));
      listed = await this.keys.verificationKeys(membershipId);
    }
    return { keys: listed.map((key) => ({ ...(key.publicJwk as Omit<PublicJwk, 'kid' | 'alg' | 'use'>), kid: key.id, alg: key.algorithm, use: 'sig' })) };
  }

  /**
   * `POST /memberships/{m}/signing-keys/rotate`: a new current key; the old one stays in the JWKS for
   * twice the longest token lifetime, so every token it signed still verifies. `SigningKeyRotated`
   * names the two kids (never a private value).
   */
  async rotate(membershipId: string, utilizerId: string): Promise<RotatedKey> {
    const lifetimes = await this.keys.tokenLifetimes(membershipId);
    if (!lifetimes) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    const keepSeconds = 2 * Math.max(lifetimes.expiresIn, lifetimes.refreshTokenExpiresIn);
    const key = await newKey(membershipId);
    const retiredKid = await this.recorder.transaction(async (record) => {
      const retired = await this.keys.rotate(key, keepSeconds);
      record({ membershipId, eventType: 'SigningKeyRotated', utilizerId, document: { kid: key.id, alg: key.algorithm, retired_kid: retired ?? null } });
      return retired;
    });
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
