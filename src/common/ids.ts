import { randomBytes, randomUUID } from 'node:crypto';

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
