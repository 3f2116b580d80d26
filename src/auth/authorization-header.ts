/** The two credentials the service accepts, parsed from an Authorization value. */
export type Credentials =
  | { scheme: 'bearer'; token: string }
  | { scheme: 'basic'; applicationId: string; secret: string };

const MAX_HEADER_LENGTH = 16 * 1024;

/**
 * `Bearer <jwt>`, or `Basic <application_id>:<secret>` as the specification writes it; the
 * standard base64 form of Basic (what `curl -u` sends) is accepted too.
 * Answers null for anything else, including a missing header.
 */
export function parseAuthorization(value: unknown): Credentials | null {
  if (typeof value !== 'string' || value.length > MAX_HEADER_LENGTH) return null;
  const match = /^\s*(\S+)\s+(\S.*?)\s*$/.exec(value);
  if (!match) return null;
  const scheme = match[1].toLowerCase();
  const rest = match[2];
  if (scheme === 'bearer') return /\s/.test(rest) ? null : { scheme: 'bearer', token: rest };
  if (scheme !== 'basic') return null;
  let pair = rest;
  if (!pair.includes(':')) {
    if (!/^[A-Za-z0-9+/=_-]+$/.test(pair)) return null;
    pair = Buffer.from(pair, 'base64').toString('utf8');
  }
  const colon = pair.indexOf(':');
  if (colon <= 0 || colon === pair.length - 1) return null;
  const applicationId = pair.slice(0, colon);
  const secret = pair.slice(colon + 1);
  if (applicationId.length > 128 || secret.length > 256) return null;
  return { scheme: 'basic', applicationId, secret };
}

/** Undo the `Bearer ` / `Basic ` prefix some body fields carry (verify-token's `token`). */
export function withoutBearerPrefix(token: string): string {
  return token.replace(/^\s*bearer\s+/i, '').trim();
}
