import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The OpenID Provider's bearer secrets (authorization codes, refresh tokens, interaction and
 * single sign-on cookies) are stored only as their SHA-256 digest (base64url): a database reader
 * cannot replay them.
 */
export function digestOf(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

/** 256 random bits, base64url: unguessable, and safe in a URL, a form and a cookie. */
export function newOpaqueSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether `secret` is the one `digest` was made of, in time independent of where they differ. */
export function matchesDigest(secret: string, digest: string | null | undefined): boolean {
  if (!digest) return false;
  const presented = Buffer.from(digestOf(secret));
  const stored = Buffer.from(digest);
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
