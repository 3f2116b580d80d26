/**
 * The one place that guarantees events are secret-free: whatever a caller passes, these keys
 * never reach the event log (and so never reach a webhook).
 */
const SECRET_KEYS = new Set([
  'password',
  'password_hash',
  'passwordhash',
  'secret',
  'secret_key',
  'secretkey',
  'secret_digest',
  'secretdigest',
  'client_secret',
  'token',
  'access_token',
  'refresh_token',
  'token_digest',
  'tokendigest',
  'id_token',
  'authorization',
]);

const MAX_DEPTH = 32;

export function sanitizeDocument(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) return null;
  if (Array.isArray(value)) return value.map((item) => sanitizeDocument(item, depth + 1));
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object') {
    const clean: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (SECRET_KEYS.has(key.toLowerCase())) continue;
      clean[key] = sanitizeDocument(item, depth + 1);
    }
    return clean;
  }
  return value;
}

export function isSecretKey(key: string): boolean {
  return SECRET_KEYS.has(key.toLowerCase());
}
