import { randomInt } from 'node:crypto';

/** Code alphabets of the contract: letters without vowels and look-alikes (RFC 8628 section 6.1). */
const DIGITS = '0123456789';
const LETTERS = 'BCDFGHJKLMNPQRSTVWXZ';
const DIGITS_AND_LETTERS = '23456789BCDFGHJKLMNPQRSTVWXZ';

/** The shape of the user codes a membership draws (a token code policy's fields). */
export interface UserCodeShape {
  length: number;
  containsLetters: boolean;
  containsDigits: boolean;
  /** Seconds a code lives. */
  expiresIn: number;
}

/** What a membership without `code_policy` uses: the contract's policy defaults. */
export const DEFAULT_USER_CODE_SHAPE: UserCodeShape = { length: 8, containsLetters: true, containsDigits: true, expiresIn: 600 };

function alphabetOf(shape: UserCodeShape): string {
  if (shape.containsLetters && shape.containsDigits) return DIGITS_AND_LETTERS;
  if (shape.containsLetters) return LETTERS;
  if (shape.containsDigits) return DIGITS;
  throw new Error('A user code needs letters, digits or both');
}

/** A uniformly drawn user code, without separators. */
export function drawUserCode(shape: UserCodeShape): string {
  const alphabet = alphabetOf(shape);
  let code = '';
  for (let i = 0; i < shape.length; i++) code += alphabet[randomInt(alphabet.length)];
  return code;
}

/** What people type: any case, with spaces or dashes ("wdjb-mjht"). */
export function normalizeUserCode(input: string): string {
  return input.toUpperCase().replace(/[\s-]+/g, '');
}
