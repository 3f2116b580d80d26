import { Inject, Injectable } from '@nestjs/common';
import { and, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { mailhooks, memberships, tokenCodePolicies, users, type MembershipRow } from '../database/schema';
import { querySchema, runListQuery, sysFields, type ListPage, type ListRequest } from '../common/query';

/** The advisory lock key of setup (see lockInstallation); the value setup has always used. */
const INSTALLATION_LOCK_KEY = 7_460_310_212;

/**
 * Membership fields for `where`, `sort` and `select`. The secret key cannot be queried (a filter
 * on it would be an oracle for it); mail providers and OTP settings hold credentials and are not
 * queryable either.
 */
export const MEMBERSHIP_QUERY_SCHEMA = querySchema(
  memberships,
  [
    'id', 'name', 'slug', 'expiresIn', 'refreshTokenExpiresIn', 'scopedTokenExpiresIn', 'hashAlgorithm', 'userActivation', 'isSystem',
    // Memberships are few (one per tenant): sorting by creation or modification time needs no index of its own.
    sysFields(memberships, ['createdAt', 'modifiedAt']),
  ],
  { sortable: ['id', 'name', 'slug'], hidden: ['secret_key', 'mail_providers', 'otp_settings', 'sign_in_policy'] },
);

/** The settings a PUT replaces. */
export type MembershipSettings = Pick<
  MembershipRow,
  | 'name'
  | 'slug'
  | 'expiresIn'
  | 'refreshTokenExpiresIn'
  | 'scopedTokenExpiresIn'
  | 'userActivation'
  | 'mfaPolicy'
  | 'hashAlgorithm'
  | 'mailProviders'
  | 'otpSettings'
  | 'signInPolicy'
  | 'codePolicy'
>;

@Injectable()
export class MembershipRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async findById(id: string): Promise<MembershipRow | undefined> {
    const [row] = await this.database.db.select().from(memberships).where(eq(memberships.id, id)).limit(1);
    return row;
  }

  /** Whether the membership has a token code policy with this slug (read in the caller's transaction). */
  async hasCodePolicy(id: string, slug: string): Promise<boolean> {
    const rows = await this.database.db
      .select({ id: tokenCodePolicies.id })
      .from(tokenCodePolicies)
      .where(and(eq(tokenCodePolicies.membershipId, id), eq(tokenCodePolicies.slug, slug)))
      .limit(1);
    return rows.length > 0;
  }

  /** Locks the row until the transaction ends: updates and deletes of one membership are serialized. */
  async lockById(id: string): Promise<MembershipRow | undefined> {
    const [row] = await this.database.db.select().from(memberships).where(eq(memberships.id, id)).limit(1).for('update');
    return row;
  }

  /**
   * The row, share-locked until the transaction ends: a write that depends on the membership's
   * settings (a mail hook naming a mail provider) waits for, or is waited for by, a PUT.
   */
  async lockForShare(id: string): Promise<MembershipRow | undefined> {
    const [row] = await this.database.db.select().from(memberships).where(eq(memberships.id, id)).limit(1).for('share');
    return row;
  }

  /**
   * Serializes concurrent setups inside the database, so exactly one of them creates the first
   * (system) membership: a transaction-scoped advisory lock, held until the caller's transaction ends.
   */
  async lockInstallation(): Promise<void> {
    await this.database.db.execute(sql`select pg_advisory_xact_lock(${INSTALLATION_LOCK_KEY})`);
  }

  async anyExists(): Promise<boolean> {
    const rows = await this.database.db.select({ one: sql<number>`1` }).from(memberships).limit(1);
    return rows.length > 0;
  }

  async insert(row: typeof memberships.$inferInsert): Promise<MembershipRow> {
    const [created] = await this.database.db.insert(memberships).values(row).returning();
    return created;
  }

  /** Every membership of the installation (only system callers get here). */
  list(request: ListRequest, toResponse: (row: MembershipRow) => object): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery<MembershipRow>({
      executor: this.database.db,
      table: memberships,
      idColumn: memberships.id,
      scope: sql`true`,
      schema: MEMBERSHIP_QUERY_SCHEMA,
      request,
      defaultSort: sql`${memberships.createdAt} asc, ${memberships.id} asc`,
      toResponse,
    });
  }

  async updateSettings(id: string, settings: MembershipSettings, modifiedBy: string): Promise<MembershipRow> {
    const [row] = await this.database.db
      .update(memberships)
      .set({ ...settings, modifiedAt: new Date(), modifiedBy })
      .where(eq(memberships.id, id))
      .returning();
    return row;
  }

  async replaceSecretKey(id: string, secretKey: string, modifiedBy: string): Promise<MembershipRow> {
    const [row] = await this.database.db
      .update(memberships)
      .set({ secretKey, modifiedAt: new Date(), modifiedBy })
      .where(eq(memberships.id, id))
      .returning();
    return row;
  }

  /** The mail provider slugs the membership's mail hooks name (a provider in use cannot be removed). */
  async mailProvidersInUse(id: string): Promise<Set<string>> {
    const rows = await this.database.db.selectDistinct({ slug: mailhooks.mailProvider }).from(mailhooks).where(eq(mailhooks.membershipId, id));
    return new Set(rows.map((row) => row.slug));
  }

  async hasUsers(id: string): Promise<boolean> {
    const rows = await this.database.db.select({ one: sql<number>`1` }).from(users).where(eq(users.membershipId, id)).limit(1);
    return rows.length > 0;
  }

  /** Everything inside the membership (roles, users, applications, sessions, webhooks) goes with it by cascade. */
  async deleteById(id: string): Promise<boolean> {
    const rows = await this.database.db.delete(memberships).where(eq(memberships.id, id)).returning({ id: memberships.id });
    return rows.length > 0;
  }
}
