import { Inject, Injectable } from '@nestjs/common';
import { and, desc, eq, gt, isNull, or, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { signingKeys, type SigningKeyRow } from '../database/schema';

/** A key as made, before it is stored. */
export interface NewSigningKey {
  id: string;
  membershipId: string;
  algorithm: string;
  publicJwk: Record<string, string>;
  privateJwk: Record<string, string>;
}

/** A key the JWKS lists: its id and public half only. */
export type VerificationKey = Pick<SigningKeyRow, 'id' | 'algorithm' | 'publicJwk'>;

/** The current key with its private half: only SigningKeys.sign reads it. */
export type PrivateSigningKey = Pick<SigningKeyRow, 'id' | 'algorithm' | 'privateJwk'>;

/** The signing_keys table (docs/oidc.md, "Keys"). Only `currentPrivate` reads a private half, for the signer. */
@Injectable()
export class SigningKeyRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  /**
   * Stores `key` as the membership's current key unless it has one already (another instance may
   * have made one at the same moment: the partial unique index keeps one). True when stored.
   */
  async addCurrentIfNone(key: NewSigningKey): Promise<boolean> {
    const rows = await this.database.db
      .insert(signingKeys)
      .values(key)
      .onConflictDoNothing({ target: signingKeys.membershipId, where: isNull(signingKeys.retiredAt) })
      .returning({ id: signingKeys.id });
    return rows.length > 0;
  }

  /** The membership's current key, private half included; undefined while it has none. */
  async currentPrivate(membershipId: string): Promise<PrivateSigningKey | undefined> {
    const [row] = await this.database.db
      .select({ id: signingKeys.id, algorithm: signingKeys.algorithm, privateJwk: signingKeys.privateJwk })
      .from(signingKeys)
      .where(and(eq(signingKeys.membershipId, membershipId), isNull(signingKeys.retiredAt)))
      .limit(1);
    return row;
  }

  /** The keys tokens may still be verified with: the current one and the retired ones within their overlap, newest first. */
  async verificationKeys(membershipId: string): Promise<VerificationKey[]> {
    return this.database.db
      .select({ id: signingKeys.id, algorithm: signingKeys.algorithm, publicJwk: signingKeys.publicJwk })
      .from(signingKeys)
      .where(and(eq(signingKeys.membershipId, membershipId), or(isNull(signingKeys.retiredAt), gt(signingKeys.expiresAt, sql`now()`))))
      .orderBy(desc(signingKeys.createdAt));
  }

  /**
   * Retires the current key, kept for verification `keepSeconds` more, and stores `key` as the
   * current one (in the request transaction the caller runs it in). The retired key's id, if there was one.
   */
  async rotate(key: NewSigningKey, keepSeconds: number): Promise<string | undefined> {
    const { db } = this.database;
    const retired = await db
      .update(signingKeys)
      .set({ retiredAt: sql`now()`, expiresAt: sql`now() + make_interval(secs => ${keepSeconds})` })
      .where(and(eq(signingKeys.membershipId, key.membershipId), isNull(signingKeys.retiredAt)))
      .returning({ id: signingKeys.id });
    await db.insert(signingKeys).values(key);
    return retired[0]?.id;
  }
}
