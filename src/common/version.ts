import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The version in package.json, read once at start. The file sits one level above both src/
 * (tests) and dist/ (the built service, and the container image, which copies it too).
 */
export const SERVICE_VERSION: string = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
