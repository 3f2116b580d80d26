/**
 * The one place that guarantees events are secret-free: whatever a caller passes, secrets never
 * reach the event log (and so never reach a webhook or the events API).
 *
 * Rules, applied at every depth, in objects and in arrays:
 * - A key that names a secret is left out with its value: passwords, password hashes, secrets,
 *   secret keys, digests, tokens (`token`, `access_token`, `reset_token`, ...), one-time codes.
 *   Key matching ignores case, `_` and `-` (`passwordHash`, `password-hash`, `PASSWORD_HASH`).
 *   Keys that only END with a secret word (`reset_token`, `new_password`, `client_secret`) are
 *   left out unless their value is a boolean: `is_refresh_token: true` is a fact, not a secret.
 * - A key that names a credential-carrying HTTP header (`Authorization`, `Cookie`, `X-Api-Key`,
 *   any name containing token, secret, key or password) keeps its name, but its value is masked.
 * - A string value that IS a credential (a JWT, or `Bearer ...` / `Basic ...`) is left out
 *   whatever its key.
 * - Dates become ISO text; functions, symbols and undefined are dropped; nesting past
 *   MAX_DEPTH becomes null; cycles become null.
 */

/** What a masked value reads as; a value already equal to it passes untouched. */
export const MASKED_VALUE = '[masked]';

const MAX_DEPTH = 32;

/** Normalized (lower case, no `_`/`-`) names that are always secret, whatever their value. */
const SECRET_NAMES = new Set([
  'password',
  'passwordhash',
  'passwd',
  'secret',
  'secretkey',
  'secretdigest',
  'clientsecret',
  'token',
  'accesstoken',
  'refreshtoken',
  'idtoken',
  'tokendigest',
  'digest',
  'apikey',
  'privatekey',
  'signingkey',
  'devicecode',
  'otp',
  'otpcode',
]);

/** Normalized suffixes that make a key secret unless the value is a boolean. */
const SECRET_SUFFIXES = ['password', 'passwordhash', 'secret', 'secretkey', 'digest', 'token', 'privatekey', 'apikey'];

/** Header names (lower case) whose values are credentials. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);
/** Any header name containing one of these words carries a credential. */
const CREDENTIAL_HEADER_WORDS = ['token', 'secret', 'key', 'password'];
/** An HTTP header name (RFC 9110 token) that contains a dash: `X-Auth-Token`, not `token`. */
const HEADER_LIKE = /^[A-Za-z0-9]+(?:-[A-Za-z0-9]+)+$/;

/** A JWT (three base64url parts, the first a JSON object) or an Authorization value. */
const JWT = /^eyJ[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]{2,}\.[A-Za-z0-9_-]*$/;
const AUTHORIZATION_VALUE = /^\s*(?:bearer|basic)\s+[A-Za-z0-9._~+/=:-]{16,}\s*$/i;

const normalize = (key: string): string => key.toLowerCase().replace(/[-_]/g, '');

/** True when the key names a secret (its value never reaches an event). */
export function isSecretKey(key: string, value?: unknown): boolean {
  const name = normalize(key);
  if (SECRET_NAMES.has(name)) return true;
  if (typeof value === 'boolean') return false;
  return SECRET_SUFFIXES.some((suffix) => name.endsWith(suffix));
}

/**
 * True for header names whose values are credentials: Authorization, Proxy-Authorization, Cookie,
 * X-Api-Key, and any name containing token, secret, key or password.
 */
export function isCredentialHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return CREDENTIAL_HEADERS.has(lower) || CREDENTIAL_HEADER_WORDS.some((word) => lower.includes(word));
}

/** True for a string that is itself a credential (a JWT or an Authorization header value). */
export function isCredentialString(value: string): boolean {
  return JWT.test(value) || AUTHORIZATION_VALUE.test(value);
}

function isMaskableHeaderKey(key: string): boolean {
  const lower = key.toLowerCase();
  return CREDENTIAL_HEADERS.has(lower) || (HEADER_LIKE.test(key) && isCredentialHeader(key));
}

/** What a key means for its value: left out, masked, left out unless boolean, or kept. */
type KeyKind = 'secret' | 'header' | 'secret-unless-boolean' | 'plain';

/**
 * The same few dozen keys come by in every event, and classifying one costs case folding and
 * several regular expressions: each key's kind is worked out once. Keys come from callers too
 * (custom fields), so the memo is bounded.
 */
const keyKinds = new Map<string, KeyKind>();
const MAX_REMEMBERED_KEYS = 10_000;

function kindOf(key: string): KeyKind {
  let kind = keyKinds.get(key);
  if (kind === undefined) {
    const name = normalize(key);
    if (SECRET_NAMES.has(name)) kind = 'secret';
    else if (isMaskableHeaderKey(key)) kind = 'header';
    else if (SECRET_SUFFIXES.some((suffix) => name.endsWith(suffix))) kind = 'secret-unless-boolean';
    else kind = 'plain';
    if (keyKinds.size >= MAX_REMEMBERED_KEYS) keyKinds.clear();
    keyKinds.set(key, kind);
  }
  return kind;
}

function clean(value: unknown, depth: number, seen: WeakSet<object>): unknown {
  if (depth > MAX_DEPTH) return null;
  if (value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return undefined; // function, symbol, undefined
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (seen.has(value)) return null;
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (const item of value as unknown[]) {
        if (typeof item === 'string' && isCredentialString(item)) continue;
        const cleaned = clean(item, depth + 1, seen);
        out.push(cleaned === undefined ? null : cleaned);
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      let cleaned: unknown;
      const kind = kindOf(key);
      if (item === MASKED_VALUE) {
        cleaned = item; // already masked (a webhook result's request headers)
      } else if (kind === 'secret') {
        continue;
      } else if (kind === 'header') {
        // Keep the header visible (a receiver's configuration is useful to read), never its value.
        if (item === undefined || item === null) continue;
        cleaned = MASKED_VALUE;
      } else if (kind === 'secret-unless-boolean' && typeof item !== 'boolean') {
        continue;
      } else if (typeof item === 'string' && isCredentialString(item)) {
        continue;
      } else {
        cleaned = clean(item, depth + 1, seen);
        if (cleaned === undefined) continue;
      }
      // defineProperty: a key named "__proto__" stays an ordinary property of the copy. Only for
      // that key: on every other it costs several times an assignment, and every event is copied.
      if (key === '__proto__') Object.defineProperty(out, key, { value: cleaned, enumerable: true, writable: true, configurable: true });
      else out[key] = cleaned;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** A secret-free deep copy of an event document (see the rules above). */
export function sanitizeDocument(value: unknown): unknown {
  return clean(value, 0, new WeakSet());
}
