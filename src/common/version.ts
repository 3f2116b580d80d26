import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The version in package.json, read once at start. The file sits one level above both src/
 * (tests) and dist/ (the built service, and the container image, which copies it too). A build
 * copied elsewhere without it still starts, as version "unknown": a start-up line is not worth
 * failing for.
 */
function readVersion(): string {
  try {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version?: unknown };
    return typeof version === 'string' ? version : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const SERVICE_VERSION: string = readVersion();
