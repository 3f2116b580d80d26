import { randomBytes, randomUUID } from 'node:crypto';

/** Resource ids: random UUID v4, never sequential. */
export const newId = (): string => randomUUID();

/** A high-entropy secret (membership keys, application secrets), base64url. */
export const newSecret = (bytes = 32): string => randomBytes(bytes).toString('base64url');

/** What a slug looks like: lower-case letters, digits and inner dashes, 1..64. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** URL-safe slug from a display name: lower case, [a-z0-9-], at most 64 characters. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/g, '');
  return slug || 'item';
}

/**
 * The longest id the service looks up. Ids it issues are 36 characters (UUID v4); the contract
 * also allows 24 hex characters. Tokens already cap their membership id (`prn`) at 64.
 */
export const MAX_ID_LENGTH = 64;

const POSSIBLE_ID = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_ID_LENGTH}}$`);

/**
 * The one rule for ids that come from outside (path, header, body, token claims, Basic token):
 * URL-safe characters, 1 to MAX_ID_LENGTH of them. Every id the service makes (newId) passes; a
 * value that fails cannot name anything, so it is answered as "not found" without a cache or
 * database lookup, and no cache ever holds longer request text under its key (contract, "Hostile
 * input" and "Bounded work").
 */
export function isPossibleId(value: unknown): value is string {
  return typeof value === 'string' && POSSIBLE_ID.test(value);
}
