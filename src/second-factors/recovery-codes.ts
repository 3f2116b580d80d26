import { createHash } from 'node:crypto';
import { drawUserCode, normalizeUserCode } from '../common/user-code';

/** 10 codes of 10 characters from 23456789BCDFGHJKLMNPQRSTVWXZ (about 48 bits each). */
export const RECOVERY_CODE_COUNT = 10;
const RECOVERY_CODE_SHAPE = { length: 10, containsLetters: true, containsDigits: true, expiresIn: 0 };

export function drawRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => drawUserCode(RECOVERY_CODE_SHAPE));
}

/**
 * The stored form: SHA-256 of the user id and the normalized code (typed like user codes: any
 * case, spaces and dashes ignored). The user id in the digest keeps equal codes of two users apart.
 */
export function recoveryCodeDigest(userId: string, input: string): string {
  return createHash('sha256').update(`${userId}:${normalizeUserCode(input)}`).digest('hex');
}
