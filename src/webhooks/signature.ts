/**
 * Webhook request signatures (api-contract "Webhooks"): the header
 * `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
 *
 * Sign the exact body bytes that are sent (the serialized JSON string, UTF-8); receivers verify
 * the raw body they received, before parsing it. Pure functions, node:crypto only.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries the signature. */
export const WEBHOOK_SIGNATURE_HEADER = 'X-Webhook-Signature';

/** Longest header `verifyWebhookSignature` looks at; longer ones are rejected unparsed. */
const MAX_HEADER_LENGTH = 4096;
const DIGITS = /^[0-9]{1,15}$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

function hmacHex(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

/**
 * Returns `t=<unixSeconds>,v1=<hex HMAC-SHA256(secret, `${t}.${body}`)>`.
 * Throws TypeError for an empty secret and RangeError unless unixSeconds is a non-negative
 * safe integer (pass `Math.floor(Date.now() / 1000)`).
 */
export function signWebhookBody(secret: string, body: string, unixSeconds: number): string {
  if (typeof secret !== 'string' || secret.length === 0) throw new TypeError('Webhook secret must be a non-empty string');
  if (typeof body !== 'string') throw new TypeError('Webhook body must be a string');
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0) {
    throw new RangeError('unixSeconds must be a non-negative integer');
  }
  return `t=${unixSeconds},v1=${hmacHex(secret, String(unixSeconds), body)}`;
}

/**
 * Checks a signature header against the raw body. True when the header has exactly one `t`, the
 * timestamp is within `toleranceSeconds` of `nowSeconds` (either direction), and at least one
 * `v1` matches (several `v1` entries are allowed, e.g. during secret rotation; other keys are
 * ignored). Comparison is constant-time. Never throws: malformed input, an empty secret or a
 * non-finite/negative tolerance gives false.
 */
export function verifyWebhookSignature(
  secret: string,
  body: string,
  header: string,
  toleranceSeconds: number,
  nowSeconds: number,
): boolean {
  if (typeof secret !== 'string' || secret.length === 0) return false;
  if (typeof body !== 'string' || typeof header !== 'string' || header.length > MAX_HEADER_LENGTH) return false;
  if (!(toleranceSeconds >= 0) || !Number.isFinite(nowSeconds)) return false;

  let timestamp: string | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) return false;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestamp !== undefined || !DIGITS.test(value)) return false;
      timestamp = value; // the HMAC covers the timestamp text exactly as sent
    } else if (key === 'v1') {
      if (!HEX_SHA256.test(value)) return false;
      candidates.push(value.toLowerCase());
    }
  }
  if (timestamp === undefined || candidates.length === 0) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;

  const expected = Buffer.from(hmacHex(secret, timestamp, body), 'hex');
  let matched = false;
  for (const candidate of candidates) {
    // Both buffers are 32 bytes (checked by HEX_SHA256), as timingSafeEqual requires.
    if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) matched = true;
  }
  return matched;
}
