import { createHmac, timingSafeEqual } from 'node:crypto';
import { drawUserCode, normalizeUserCode } from '../common/user-code';
import type { OtpSettings } from '../memberships/otp-settings';

/**
 * One-time passwords: the alphabets and normalisation of user codes (contract "Shared rules": one
 * home for both), drawn with crypto.randomInt.
 */
export function drawOtp(settings: OtpSettings): string {
  return drawUserCode({
    length: settings.length,
    containsLetters: settings.contains_letters,
    containsDigits: settings.contains_digits,
    expiresIn: settings.expires_in,
  });
}

/** Stored form: HMAC-SHA256(secret_key, `<challenge id>:<otp>`), hex; the OTP as typed is normalised first. */
export function otpDigest(secretKey: string, challengeId: string, otp: string): string {
  return createHmac('sha256', secretKey).update(`${challengeId}:${normalizeUserCode(otp)}`).digest('hex');
}

/** Both are hex SHA-256 digests, so equal in length. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
