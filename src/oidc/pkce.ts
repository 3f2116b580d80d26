import { createHash } from 'node:crypto';

/** RFC 7636 4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** The S256 challenge (RFC 7636 4.6) of `verifier`, or undefined for a verifier of the wrong form. */
export function s256Challenge(verifier: string | undefined): string | undefined {
  if (!verifier || !CODE_VERIFIER.test(verifier)) return undefined;
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/**
 * Whether `verifier` is the one whose S256 challenge is `challenge`. A plain comparison: both are
 * one-way hashes of verifiers, so its timing tells an attacker nothing about the verifier.
 */
export function verifiesS256(verifier: string | undefined, challenge: string): boolean {
  return s256Challenge(verifier) === challenge;
}
