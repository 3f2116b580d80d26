import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type {
  AuthenticationResponseJSON,
  AuthenticatorTransportFuture,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { APP_CONFIG, type AppConfig } from '../config/config';
import type { WebauthnCredentialRow } from '../database/schema';

/** A challenge is 32 random bytes and lives 300 s (contract, "Second factors"). */
const CHALLENGE_BYTES = 32;
export const PASSKEY_CHALLENGE_SECONDS = 300;

/** A newly registered passkey, encoded for storage. */
export interface RegisteredPasskey {
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[];
}

/** Whether a response's challenge is the one that was issued; it takes it too (single use). */
export type ChallengeCheck = (challenge: string) => Promise<boolean>;

/**
 * The library takes a string challenge as text and encodes its characters: the 32 random bytes
 * go as bytes, so the options (and the browser's clientDataJSON) carry exactly the stored base64url.
 */
const challengeBytes = (challenge: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(challenge, 'base64url'));

const transportsOf = (credential: Pick<WebauthnCredentialRow, 'transports'>): AuthenticatorTransportFuture[] =>
  credential.transports as AuthenticatorTransportFuture[];

let library: Promise<typeof import('@simplewebauthn/server')> | undefined;

/**
 * The library, loaded at the first passkey operation: with its CBOR, ASN.1 and X.509 dependencies
 * it is 284 modules, a seventh of what the service loads as it starts (1,904), which an
 * installation without passkeys never needs, nor does any other request.
 */
const webauthn = (): Promise<typeof import('@simplewebauthn/server')> => (library ??= import('@simplewebauthn/server'));

/**
 * Passkeys (WebAuthn Level 2) through @simplewebauthn/server: the maintained library the contract
 * names; it parses CBOR and COSE keys, checks origin, RP id hash, flags, signature and counter.
 * Attestation `none`: the service trusts no authenticator vendor, it only binds a key to a user.
 * Any failure of a library check is `undefined` here; the caller answers 400 MfaCodeInvalid.
 */
@Injectable()
export class Passkeys {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /**
   * What a registration or an assertion response must match: the challenge issued (taken, single
   * use), this service's origins and RP id. User verification is not required (the password or
   * the first factor came first).
   */
  private expected(challenge: ChallengeCheck) {
    return {
      expectedChallenge: challenge,
      expectedOrigin: this.config.webauthnOrigins,
      expectedRPID: this.config.webauthnRpId,
      requireUserVerification: false,
    };
  }

  newChallenge(): string {
    return randomBytes(CHALLENGE_BYTES).toString('base64url');
  }

  async registrationOptions(
    rpName: string,
    user: { id: string; username: string },
    challenge: string,
    existing: readonly WebauthnCredentialRow[],
  ): Promise<PublicKeyCredentialCreationOptionsJSON> {
    const { generateRegistrationOptions } = await webauthn();
    return generateRegistrationOptions({
      rpName,
      rpID: this.config.webauthnRpId,
      userName: user.username,
      userID: new TextEncoder().encode(user.id),
      challenge: challengeBytes(challenge),
      timeout: PASSKEY_CHALLENGE_SECONDS * 1000,
      attestationType: 'none',
      excludeCredentials: existing.map((credential) => ({ id: credential.credentialId, transports: transportsOf(credential) })),
      authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    });
  }

  async verifyRegistration(response: RegistrationResponseJSON, challenge: ChallengeCheck): Promise<RegisteredPasskey | undefined> {
    const { verifyRegistrationResponse } = await webauthn();
    try {
      const verified = await verifyRegistrationResponse({ response, ...this.expected(challenge) });
      if (!verified.verified) return undefined;
      const { credential } = verified.registrationInfo;
      return {
        credentialId: credential.id,
        publicKey: Buffer.from(credential.publicKey).toString('base64url'),
        counter: credential.counter,
        transports: credential.transports ?? [],
      };
    } catch {
      return undefined;
    }
  }

  async authenticationOptions(challenge: string, credentials: readonly WebauthnCredentialRow[]): Promise<PublicKeyCredentialRequestOptionsJSON> {
    const { generateAuthenticationOptions } = await webauthn();
    return generateAuthenticationOptions({
      rpID: this.config.webauthnRpId,
      challenge: challengeBytes(challenge),
      timeout: PASSKEY_CHALLENGE_SECONDS * 1000,
      userVerification: 'preferred',
      allowCredentials: credentials.map((credential) => ({ id: credential.credentialId, transports: transportsOf(credential) })),
    });
  }

  /**
   * The new signature counter when the assertion is valid for `credential`; the library refuses a
   * counter that did not grow (when either side keeps one).
   */
  async verifyAuthentication(
    response: AuthenticationResponseJSON,
    challenge: ChallengeCheck,
    credential: WebauthnCredentialRow,
  ): Promise<number | undefined> {
    const { verifyAuthenticationResponse } = await webauthn();
    try {
      const verified = await verifyAuthenticationResponse({
        response,
        ...this.expected(challenge),
        credential: {
          id: credential.credentialId,
          publicKey: Buffer.from(credential.publicKey, 'base64url'),
          counter: credential.counter,
          transports: transportsOf(credential),
        },
      });
      return verified.verified ? verified.authenticationInfo.newCounter : undefined;
    } catch {
      return undefined;
    }
  }
}
