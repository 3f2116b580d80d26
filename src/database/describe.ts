import type { DatabaseTarget } from '../config/config';

/** The database in words, for the start-up line; never shows a password. */
export function describeTarget(target: DatabaseTarget): string {
  if (target.kind === 'embedded') {
    return target.dataDir ? `embedded PostgreSQL (PGlite) in ${target.dataDir}` : 'embedded PostgreSQL (PGlite) in memory';
  }
  const url = new URL(target.url);
  if (url.password) url.password = '***';
  return `PostgreSQL server at ${url.toString()}`;
}
