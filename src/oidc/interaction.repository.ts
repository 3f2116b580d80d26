import { Inject, Injectable } from '@nestjs/common';
import { and, eq, gt } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { oidcInteractions, type OidcInteractionRow } from '../database/schema';

export type NewInteraction = typeof oidcInteractions.$inferInsert & { id: string; expiresAt: Date };
export type InteractionProgress = Partial<Pick<OidcInteractionRow, 'stage' | 'userId' | 'amr' | 'authTime' | 'sessionId'>>;

/** Authorizations in progress (`oidc_interactions`); an expired one is never read (the sweeper deletes it). */
@Injectable()
export class InteractionRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async insert(row: NewInteraction): Promise<void> {
    await this.database.db.insert(oidcInteractions).values(row);
  }

  async findLive(membershipId: string, id: string): Promise<OidcInteractionRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(oidcInteractions)
      .where(and(eq(oidcInteractions.membershipId, membershipId), eq(oidcInteractions.id, id), gt(oidcInteractions.expiresAt, new Date())))
      .limit(1);
    return row;
  }

  /** Moves the interaction on, only from the stage it was read at (two tabs posting at once: one wins). */
  async advance(membershipId: string, id: string, from: OidcInteractionRow['stage'], progress: InteractionProgress): Promise<boolean> {
    const updated = await this.database.db
      .update(oidcInteractions)
      .set(progress)
      .where(and(eq(oidcInteractions.membershipId, membershipId), eq(oidcInteractions.id, id), eq(oidcInteractions.stage, from)))
      .returning({ id: oidcInteractions.id });
    return updated.length > 0;
  }

  /** Ends the interaction; true for the one request that did (the others find it gone). */
  async delete(membershipId: string, id: string): Promise<boolean> {
    const deleted = await this.database.db
      .delete(oidcInteractions)
      .where(and(eq(oidcInteractions.membershipId, membershipId), eq(oidcInteractions.id, id)))
      .returning({ id: oidcInteractions.id });
    return deleted.length > 0;
  }
}
