import { Inject, Injectable } from '@nestjs/common';
import { and, eq, isNull } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { oidcClientTokens, type OidcClientTokenRow } from '../database/schema';

export type NewOidcClientToken = Pick<OidcClientTokenRow, 'id' | 'membershipId' | 'clientId' | 'scopes' | 'expiresAt'>;

/**
 * The oidc_client_tokens table: one row per `client_credentials` access token, by its `jti`. A
 * client token has no user and no session, so this row is what introspection and revocation read.
 */
@Injectable()
export class OidcClientTokenRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async insert(token: NewOidcClientToken): Promise<void> {
    await this.database.db.insert(oidcClientTokens).values(token);
  }

  /** The token with this `jti` in the membership, revoked or not; undefined when none. */
  async find(membershipId: string, jti: string): Promise<OidcClientTokenRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(oidcClientTokens)
      .where(and(eq(oidcClientTokens.membershipId, membershipId), eq(oidcClientTokens.id, jti)))
      .limit(1);
    return row;
  }

  /**
   * Revokes the token if it is the client's and still active: one conditional update, so two
   * revocations record one event. The row revoked, or undefined.
   */
  async revoke(membershipId: string, jti: string, clientId: string, reason: string): Promise<OidcClientTokenRow | undefined> {
    const [row] = await this.database.db
      .update(oidcClientTokens)
      .set({ revokedAt: new Date(), revokedBy: clientId, revokeReason: reason })
      .where(
        and(
          eq(oidcClientTokens.membershipId, membershipId),
          eq(oidcClientTokens.id, jti),
          eq(oidcClientTokens.clientId, clientId),
          isNull(oidcClientTokens.revokedAt),
        ),
      )
      .returning();
    return row;
  }
}
