import { Inject, Injectable } from '@nestjs/common';
import { and, asc, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { oidcConsents, type OidcConsentRow } from '../database/schema';

/** Remembered consent per user and client (`oidc_consents`). */
@Injectable()
export class ConsentRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async find(membershipId: string, userId: string, clientId: string): Promise<OidcConsentRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(oidcConsents)
      .where(and(eq(oidcConsents.membershipId, membershipId), eq(oidcConsents.userId, userId), eq(oidcConsents.clientId, clientId)))
      .limit(1);
    return row;
  }

  /** Stores consent to `scopes` (replacing what the user gave the client before). */
  async upsert(membershipId: string, userId: string, clientId: string, scopes: readonly string[]): Promise<OidcConsentRow> {
    const [row] = await this.database.db
      .insert(oidcConsents)
      .values({ membershipId, userId, clientId, scopes: [...scopes] })
      .onConflictDoUpdate({
        target: [oidcConsents.membershipId, oidcConsents.userId, oidcConsents.clientId],
        set: { scopes: [...scopes], updatedAt: sql`now()` },
      })
      .returning();
    return row;
  }

  async listOfUser(membershipId: string, userId: string): Promise<OidcConsentRow[]> {
    return this.database.db
      .select()
      .from(oidcConsents)
      .where(and(eq(oidcConsents.membershipId, membershipId), eq(oidcConsents.userId, userId)))
      .orderBy(asc(oidcConsents.createdAt), asc(oidcConsents.clientId));
  }

  /** Deletes one client's consent, or all of the user's; answers what was deleted. */
  async delete(membershipId: string, userId: string, clientId?: string): Promise<OidcConsentRow[]> {
    return this.database.db
      .delete(oidcConsents)
      .where(and(eq(oidcConsents.membershipId, membershipId), eq(oidcConsents.userId, userId), clientId ? eq(oidcConsents.clientId, clientId) : undefined))
      .returning();
  }
}
