import { createHash, timingSafeEqual } from 'node:crypto';

/** RFC 7636 4.1: 43 to 128 unreserved characters. */
const CODE_VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Whether `verifier` is the one whose S256 challenge (RFC 7636 4.6) is `challenge`. */
export function verifiesS256(verifier: string | undefined, challenge: string): boolean {
  if (!verifier || !CODE_VERIFIER.test(verifier)) return false;
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
