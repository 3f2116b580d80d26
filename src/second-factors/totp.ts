import { Secret, TOTP } from 'otpauth';

/**
 * TOTP per RFC 6238 through `otpauth` (hectorm/otpauth: maintained, RFC 4226/6238 test vectors,
 * constant-time comparison): SHA-1, 6 digits, 30-second steps, a 160-bit secret (RFC 4226 section 4's
 * recommended length), the previous and the next step accepted for clock drift.
 */
const PERIOD_SECONDS = 30;
const DIGITS = 6;
const SECRET_BYTES = 20;
const DRIFT_STEPS = 1;

/** A new shared secret, base32 (what authenticator apps take). */
export function newTotpSecret(): string {
  return new Secret({ size: SECRET_BYTES }).base32;
}

/**
 * The contract's URI, parameters in its order: `otpauth://totp/<issuer>:<account>?secret=…&issuer=…
 * &algorithm=SHA1&digits=6&period=30`, label and issuer URI-encoded.
 */
export function otpauthUri(secret: string, issuer: string, account: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  return `otpauth://totp/${label}?secret=${secret}&issuer=${encodeURIComponent(issuer)}&algorithm=SHA1&digits=${DIGITS}&period=${PERIOD_SECONDS}`;
}

/** What people type: spaces inside ("123 456") are allowed; anything but six digits is wrong. */
export function normalizeTotpCode(input: string): string | undefined {
  const code = input.replace(/\s+/g, '');
  return /^\d{6}$/.test(code) ? code : undefined;
}

/**
 * The time step (RFC 6238's T) whose code this is, within one step of now; undefined for a wrong
 * code. The caller refuses a step at or before the last one accepted for the user (no replay).
 */
export function matchingTotpStep(secret: string, input: string, now = Date.now()): number | undefined {
  const code = normalizeTotpCode(input);
  if (code === undefined) return undefined;
  const totp = new TOTP({ algorithm: 'SHA1', digits: DIGITS, period: PERIOD_SECONDS, secret: Secret.fromBase32(secret) });
  const delta = totp.validate({ token: code, timestamp: now, window: DRIFT_STEPS });
  if (delta === null) return undefined;
  return Math.floor(now / 1000 / PERIOD_SECONDS) + delta;
}
