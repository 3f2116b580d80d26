import { Inject, Injectable } from '@nestjs/common';
import { and, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { providerIdentities, users, type UserRow } from '../database/schema';
import { newId } from '../common/ids';

/** Links between a provider's subjects (`sub`) and users. */
@Injectable()
export class ProviderIdentityRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  /** The user this subject of the provider signs in as. */
  async findUser(membershipId: string, providerId: string, subject: string): Promise<UserRow | undefined> {
    const [row] = await this.database.db
      .select({ user: users })
      .from(providerIdentities)
      .innerJoin(users, eq(users.id, providerIdentities.userId))
      .where(and(eq(providerIdentities.membershipId, membershipId), eq(providerIdentities.providerId, providerId), eq(providerIdentities.subject, subject)))
      .limit(1);
    return row?.user;
  }

  /**
   * Serializes first sign-ins of one subject of one provider until the transaction ends: the
   * second waits, then finds the link the first made instead of signing the subject up again.
   */
  async lockSubject(providerId: string, subject: string): Promise<void> {
    await this.database.db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`provider-subject:${providerId}:${subject}`}::text, 0))`);
  }

  /**
   * Serializes sign-ins that would sign up or link by the same e-mail address in one membership
   * (two subjects, or two providers, naming one address): the second finds the first's user and
   * links or refuses it as the resolution rules say, instead of failing on the unique e-mail.
   * Always taken after lockSubject, so the two locks cannot deadlock.
   */
  async lockEmail(membershipId: string, email: string): Promise<void> {
    await this.database.db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`provider-email:${membershipId}:${email}`}::text, 0))`);
  }

  /** Forgets every link of the provider (it now names another issuer or client, whose subjects are others). */
  async unlinkAll(membershipId: string, providerId: string): Promise<number> {
    const removed = await this.database.db
      .delete(providerIdentities)
      .where(and(eq(providerIdentities.membershipId, membershipId), eq(providerIdentities.providerId, providerId)))
      .returning({ id: providerIdentities.id });
    return removed.length;
  }

  /** Links the subject to the user; a concurrent sign-in that linked it first wins (nothing is written). */
  async link(membershipId: string, providerId: string, subject: string, userId: string): Promise<void> {
    await this.database.db
      .insert(providerIdentities)
      .values({ id: newId(), membershipId, providerId, subject, userId })
      .onConflictDoNothing({ target: [providerIdentities.providerId, providerIdentities.subject] });
  }
}
