/** The two credentials the service accepts, parsed from an Authorization value. */
export type Credentials =
  | { scheme: 'bearer'; token: string }
  | { scheme: 'basic'; applicationId: string; secret: string };

const MAX_HEADER_LENGTH = 16 * 1024;

/**
 * `Bearer <jwt>`, or `Basic <application_id>:<secret>` as the specification writes it; the
 * standard base64 form of Basic (what `curl -u` sends) is accepted too.
 * Answers null for a missing header or an unknown scheme. A Basic value that cannot be read (bad
 * base64, no colon, an empty or over-long part) answers empty credentials, which no application
 * has: every Basic problem then takes one path and gets one answer.
 */
export function parseAuthorization(value: unknown): Credentials | null {
  if (typeof value !== 'string') return null;
  // Split by hand, not by one regular expression: a header may be 64 KB of spaces.
  const trimmed = value.trim();
  const gap = trimmed.search(/\s/);
  const scheme = (gap === -1 ? trimmed : trimmed.slice(0, gap)).toLowerCase();
  const rest = gap === -1 ? '' : trimmed.slice(gap).trimStart();
  if (scheme === 'basic') return parseBasic(rest, value.length);
  if (scheme !== 'bearer' || value.length > MAX_HEADER_LENGTH || rest === '' || /\s/.test(rest)) return null;
  return { scheme: 'bearer', token: rest };
}

const UNREADABLE_BASIC: Credentials = { scheme: 'basic', applicationId: '', secret: '' };

function parseBasic(rest: string, headerLength: number): Credentials {
  if (headerLength > MAX_HEADER_LENGTH) return UNREADABLE_BASIC;
  let pair = rest;
  if (!pair.includes(':')) {
    if (!/^[A-Za-z0-9+/=_-]+$/.test(pair)) return UNREADABLE_BASIC;
    pair = Buffer.from(pair, 'base64').toString('utf8');
  }
  const colon = pair.indexOf(':');
  if (colon <= 0 || colon === pair.length - 1) return UNREADABLE_BASIC;
  const applicationId = pair.slice(0, colon);
  const secret = pair.slice(colon + 1);
  if (applicationId.length > 128 || secret.length > 256) return UNREADABLE_BASIC;
  return { scheme: 'basic', applicationId, secret };
}

/** Undo the `Bearer ` / `Basic ` prefix some body fields carry (verify-token's `token`). */
export function withoutBearerPrefix(token: string): string {
  return token.replace(/^\s*bearer\s+/i, '').trim();
}
