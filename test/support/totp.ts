import { createHmac } from 'node:crypto';

/**
 * TOTP computed by the test itself, per RFC 6238 (HMAC-SHA1 over the step counter, dynamic
 * truncation of RFC 4226 section 5.3), independent of the service's library.
 */
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
export const TOTP_PERIOD_MS = 30_000;

export function base32Decode(text: string): Buffer {
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const char of text.replace(/=+$/, '')) {
    const index = BASE32.indexOf(char);
    if (index < 0) throw new Error(`not base32: ${char}`);
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** The code of time step `step` for a raw key (RFC 4226 HOTP with the step as counter). */
export function hotp(key: Buffer, step: number, digits = 6): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3];
  return String(binary % 10 ** digits).padStart(digits, '0');
}

export const totpAt = (secret: string, step: number): string => hotp(base32Decode(secret), step);
export const currentStep = (): number => Math.floor(Date.now() / TOTP_PERIOD_MS);

/** Waits into a fresh step when the current one ends within `marginMs`, so "previous/next step" stays exact while a test runs. */
export async function awayFromStepEdge(marginMs = 8000): Promise<void> {
  const left = TOTP_PERIOD_MS - (Date.now() % TOTP_PERIOD_MS);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 250));
}
