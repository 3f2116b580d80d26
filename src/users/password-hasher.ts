import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import argon2 from 'argon2';
import { APP_CONFIG, type AppConfig } from '../config/config';

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

/**
 * Under NODE_ENV=test only: argon2id at its cheapest (1 MiB, one pass). The test suite hashes and
 * verifies thousands of passwords, each ~70-190 ms at the parameters above on a loaded two-core
 * machine and ~3 ms at these; the code path (argon2id, the thread pool, the decoy) is the same,
 * and a stored hash names its own parameters, so verification never depends on which were used.
 */
export const TEST_ARGON2_OPTIONS = {
  type: argon2.argon2id,
  memoryCost: 1024,
  timeCost: 1,
  parallelism: 1,
} as const;

/** Longest password accepted, checked before any hashing so a huge one costs nothing. */
export const MAX_PASSWORD_LENGTH = 256;
export const MIN_PASSWORD_LENGTH = 8;

/** How the stored hash of a user without a password begins: no argon2 hash does. */
const NO_PASSWORD_PREFIX = '!unusable-';

/**
 * The stored hash of a user who has no password (signed up through an external provider): no
 * password verifies against it until a reset or an administrator sets one.
 */
export function noPasswordHash(): string {
  return `${NO_PASSWORD_PREFIX}${randomBytes(16).toString('hex')}`;
}

/** Whether the user has no password of its own (see noPasswordHash). */
export function hasNoPassword(passwordHash: string): boolean {
  return passwordHash.startsWith(NO_PASSWORD_PREFIX);
}

@Injectable()
export class PasswordHasher {
  /** Verified for unknown users so that they answer in the same time as a wrong password. */
  private decoyHash: Promise<string> | undefined;
  private readonly options: typeof ARGON2_OPTIONS | typeof TEST_ARGON2_OPTIONS;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.options = config.nodeEnv === 'test' ? TEST_ARGON2_OPTIONS : ARGON2_OPTIONS;
  }

  hash(password: string): Promise<string> {
    return argon2.hash(password, this.options);
  }

  async verify(hash: string, password: string): Promise<boolean> {
    // As long as a wrong password: the answer's time must not tell that the user has none.
    if (hasNoPassword(hash)) return this.verifyDecoy(password);
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
