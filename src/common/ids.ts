import { randomBytes, randomUUID } from 'node:crypto';
import { POSSIBLE_ID_PATTERN } from './patterns';

/** Resource ids: random UUID v4, never sequential. */
export const newId = (): string => randomUUID();

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

/**
 * The one rule for ids that come from outside (path, header, body, token claims, Basic token):
 * URL-safe characters, 1 to MAX_ID_LENGTH of them (patterns.ts). Every id the service makes (newId) passes; a
 * value that fails cannot name anything, so it is answered as "not found" without a cache or
 * database lookup, and no cache ever holds longer request text under its key (contract, "Hostile
 * input" and "Bounded work").
 */
export function isPossibleId(value: unknown): value is string {
  return typeof value === 'string' && POSSIBLE_ID_PATTERN.test(value);
}
