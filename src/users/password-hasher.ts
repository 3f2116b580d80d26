import { Injectable } from '@nestjs/common';
import argon2 from 'argon2';

/**
 * argon2id with OWASP's minimum recommendation (m = 19 MiB, t = 2, p = 1). Hashing runs on
 * libuv's thread pool, so it never blocks the event loop; main.ts sizes the pool to the cores.
 */
export const ARGON2_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 19_456,
  timeCost: 2,
  parallelism: 1,
} as const;

/** Longest password accepted, checked before any hashing so a huge one costs nothing. */
export const MAX_PASSWORD_LENGTH = 256;
export const MIN_PASSWORD_LENGTH = 8;

@Injectable()
export class PasswordHasher {
  /** Verified for unknown users so that they answer in the same time as a wrong password. */
  private decoyHash: Promise<string> | undefined;

  hash(password: string): Promise<string> {
    return argon2.hash(password, ARGON2_OPTIONS);
  }

  async verify(hash: string, password: string): Promise<boolean> {
    try {
      return await argon2.verify(hash, password);
    } catch {
      return false;
    }
  }

  async verifyDecoy(password: string): Promise<false> {
    this.decoyHash ??= this.hash('decoy-password-that-matches-nothing');
    await this.verify(await this.decoyHash, password);
    return false;
  }
}
