import { Inject, Injectable } from '@nestjs/common';
import { and, eq, inArray, sql } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { memberships, tokenCodePolicies, type TokenCodePolicyRow } from '../database/schema';
import type { QuerySchema } from '../common/query';
import { toTokenCodePolicyResponse } from './token-code-policy.mapper';

export type NewTokenCodePolicyRow = typeof tokenCodePolicies.$inferInsert;
/** What a replace (PUT) writes; the slug is immutable. */
export type TokenCodePolicyChanges = Pick<
  NewTokenCodePolicyRow,
  'name' | 'description' | 'length' | 'containsLetters' | 'containsDigits' | 'expiresIn' | 'modifiedAt' | 'modifiedBy'
>;

export const TOKEN_CODE_POLICY_QUERY_SCHEMA: QuerySchema = {
  fields: {
    _id: { sql: sql`${tokenCodePolicies.id}`, type: 'string' },
    name: { sql: sql`${tokenCodePolicies.name}`, type: 'string' },
    slug: { sql: sql`${tokenCodePolicies.slug}`, type: 'string', sortable: true },
    description: { sql: sql`${tokenCodePolicies.description}`, type: 'string' },
    length: { sql: sql`${tokenCodePolicies.length}`, type: 'integer' },
    contains_letters: { sql: sql`${tokenCodePolicies.containsLetters}`, type: 'boolean' },
    contains_digits: { sql: sql`${tokenCodePolicies.containsDigits}`, type: 'boolean' },
    expires_in: { sql: sql`${tokenCodePolicies.expiresIn}`, type: 'integer' },
    membership_id: { sql: sql`${tokenCodePolicies.membershipId}`, type: 'string' },
    'sys.created_at': { sql: sql`${tokenCodePolicies.createdAt}`, type: 'timestamp', sortable: true },
    'sys.created_by': { sql: sql`${tokenCodePolicies.createdBy}`, type: 'string' },
    'sys.modified_at': { sql: sql`${tokenCodePolicies.modifiedAt}`, type: 'timestamp' },
    'sys.modified_by': { sql: sql`${tokenCodePolicies.modifiedBy}`, type: 'string' },
  },
  hidden: [],
};

@Injectable()
export class TokenCodePolicyRepository extends MembershipScopedRepository<TokenCodePolicyRow, NewTokenCodePolicyRow, TokenCodePolicyChanges> {
  constructor(@Inject(DATABASE) database: Database) {
    super(database, { table: tokenCodePolicies, schema: TOKEN_CODE_POLICY_QUERY_SCHEMA, toResponse: toTokenCodePolicyResponse });
  }

  async findBySlug(membershipId: string, slug: string, executor: Executor = this.database.db): Promise<TokenCodePolicyRow | undefined> {
    const [row] = await executor
      .select()
      .from(tokenCodePolicies)
      .where(and(this.scope(membershipId), eq(tokenCodePolicies.slug, slug)))
      .limit(1);
    return row;
  }

  /**
   * Whether the membership names one of these policies as its `code_policy`. The membership row is
   * locked (share) so that naming a policy and deleting it cannot both commit.
   */
  async inUse(membershipId: string, slugs: readonly string[], tx: Executor = this.database.db): Promise<boolean> {
    if (slugs.length === 0) return false;
    const [row] = await tx
      .select({ codePolicy: memberships.codePolicy })
      .from(memberships)
      .where(eq(memberships.id, membershipId))
      .for('share');
    return row?.codePolicy !== null && row?.codePolicy !== undefined && slugs.includes(row.codePolicy);
  }

  /** The policies with these ids (the ones a bulk delete would remove), for the in-use check. */
  async findByIds(membershipId: string, ids: readonly string[], tx: Executor = this.database.db): Promise<TokenCodePolicyRow[]> {
    if (ids.length === 0) return [];
    return tx
      .select()
      .from(tokenCodePolicies)
      .where(and(this.scope(membershipId), inArray(tokenCodePolicies.id, [...ids])))
      .for('update');
  }
}
