import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The secret that guards first-run setup: configured, generated at start, or absent once set up. */
export class SetupToken {
  private digest: Buffer | null = null;

  constructor(configured: string | null) {
    if (configured) this.digest = SetupToken.hash(configured);
  }

  get isSet(): boolean {
    return this.digest !== null;
  }

  /** Generates a random token for an installation that is not set up and has none configured. */
  generate(): string {
    const token = randomBytes(32).toString('base64url');
    this.digest = SetupToken.hash(token);
    return token;
  }

  /** Constant time: both sides are hashed to equal length first. */
  matches(presented: unknown): boolean {
    if (!this.digest || typeof presented !== 'string' || presented.length === 0 || presented.length > 1024) return false;
    return timingSafeEqual(SetupToken.hash(presented), this.digest);
  }

  private static hash(value: string): Buffer {
    return createHash('sha256').update(value, 'utf8').digest();
  }
}
