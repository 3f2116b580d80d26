import { randomBytes, randomUUID } from 'node:crypto';

/** Resource ids: random UUID v4, never sequential. */
export const newId = (): string => randomUUID();

/**
 * The longest id the service looks up. Ids it issues are 36 characters (UUID v4); the contract
 * also allows 24 hex characters. Tokens already cap their membership id (`prn`) at 64.
 */
export const MAX_ID_LENGTH = 64;
const ID_SHAPE = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_ID_LENGTH}}$`);

/**
 * Whether a value from a request (path, header or body) could be an id at all: 1 to 64 URL-safe
 * characters. Checked before any cache or database lookup, so an id that cannot exist costs
 * neither, and no cache ever holds longer request text under its key (contract, "Bounded work").
 */
export function isWellFormedId(value: string): boolean {
  return ID_SHAPE.test(value);
}

/** A high-entropy secret (membership keys, application secrets), base64url. */
export const newSecret = (bytes = 32): string => randomBytes(bytes).toString('base64url');

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
