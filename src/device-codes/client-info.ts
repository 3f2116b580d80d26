import type { FieldError } from '../common/errors';
import { validationFailure } from '../common/validation';

const MAX_KEYS = 20;
const KEY = /^[a-z0-9_]{1,64}$/;
const MAX_VALUE_LENGTH = 256;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/**
 * Bidirectional controls (marks, embeddings, overrides, isolates): escaping does not stop them
 * from reversing how the approval page shows a device's name ("\u202eevil" reads as "live").
 * Other format characters stay allowed: emoji sequences join with U+200D.
 */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/**
 * The device's self-description (`name` is its display name). Device-reported and untrusted:
 * bounded here, escaped wherever it is shown.
 */
export function parseClientInfo(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw validationFailure([{ field: 'client_info', message: 'must be an object of strings' }]);
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const errors: FieldError[] = [];
  if (entries.length > MAX_KEYS) errors.push({ field: 'client_info', message: `must have at most ${MAX_KEYS} keys` });
  for (const [key, item] of entries.slice(0, MAX_KEYS + 1)) {
    const field = `client_info.${key.slice(0, 64)}`;
    if (!KEY.test(key)) errors.push({ field, message: 'keys must match ^[a-z0-9_]{1,64}$' });
    else if (typeof item !== 'string') errors.push({ field, message: 'must be a string' });
    else if (item.length > MAX_VALUE_LENGTH) errors.push({ field, message: `must be at most ${MAX_VALUE_LENGTH} characters` });
    else if (CONTROL.test(item)) errors.push({ field, message: 'must not contain control characters' });
    else if (BIDI_CONTROL.test(item)) errors.push({ field, message: 'must not contain bidirectional text controls' });
  }
  if (errors.length) throw validationFailure(errors);
  return Object.fromEntries(entries) as Record<string, string>;
}
