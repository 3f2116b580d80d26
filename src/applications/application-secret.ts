import { createHash, timingSafeEqual } from 'node:crypto';
import { newSecret } from '../common/ids';

/**
 * Application secrets are 32 random bytes, so a plain SHA-256 digest is enough to store them
 * (no dictionary to attack) and cheap enough to check on every request.
 */
export function newApplicationSecret(): { secret: string; digest: string } {
  const secret = newSecret(32);
  return { secret, digest: digestSecret(secret) };
}

export function digestSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of a presented secret with a stored digest. */
export function secretMatches(presented: string, storedDigest: string): boolean {
  const a = Buffer.from(digestSecret(presented), 'hex');
  const b = Buffer.from(storedDigest, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
