import { Inject, Injectable } from '@nestjs/common';
import { and, eq, isNull } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { oidcAuthorizationCodes, type OidcAuthorizationCodeRow } from '../database/schema';

export type NewAuthorizationCode = typeof oidcAuthorizationCodes.$inferInsert & { id: string; expiresAt: Date };

/** Authorization codes by the digest of the code (`oidc_authorization_codes`). */
@Injectable()
export class AuthorizationCodeRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async insert(row: NewAuthorizationCode): Promise<void> {
    await this.database.db.insert(oidcAuthorizationCodes).values(row);
  }

  /** The code whatever its state (a used or expired one matters: its reuse revokes what it issued). */
  async find(membershipId: string, digest: string): Promise<OidcAuthorizationCodeRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(oidcAuthorizationCodes)
      .where(and(eq(oidcAuthorizationCodes.membershipId, membershipId), eq(oidcAuthorizationCodes.id, digest)))
      .limit(1);
    return row;
  }

  /**
   * Marks the code used and names the token record its exchange is about to issue, only if it was
   * unused: of two exchanges at once one wins, and the other knows which grant to revoke.
   */
  async consume(membershipId: string, digest: string, issuedTokenId: string): Promise<boolean> {
    const updated = await this.database.db
      .update(oidcAuthorizationCodes)
      .set({ consumedAt: new Date(), issuedTokenId })
      .where(and(eq(oidcAuthorizationCodes.membershipId, membershipId), eq(oidcAuthorizationCodes.id, digest), isNull(oidcAuthorizationCodes.consumedAt)))
      .returning({ id: oidcAuthorizationCodes.id });
    return updated.length > 0;
  }
}
