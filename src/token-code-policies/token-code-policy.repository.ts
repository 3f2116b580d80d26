import { Injectable } from '@nestjs/common';
import { and, eq, inArray } from 'drizzle-orm';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { memberships, tokenCodePolicies, type TokenCodePolicyRow } from '../database/schema';
import { membershipSysFields, namedResourceFields, querySchema } from '../common/query';
import { toTokenCodePolicyResponse } from './token-code-policy.mapper';

export type NewTokenCodePolicyRow = typeof tokenCodePolicies.$inferInsert;
/** What a replace (PUT) writes; the slug is immutable. */
export type TokenCodePolicyChanges = Pick<
  NewTokenCodePolicyRow,
  'name' | 'description' | 'length' | 'containsLetters' | 'containsDigits' | 'expiresIn' | 'modifiedAt' | 'modifiedBy'
>;

export const TOKEN_CODE_POLICY_QUERY_SCHEMA = querySchema(tokenCodePolicies, [
  namedResourceFields(tokenCodePolicies, { sortableId: false }),
  'length', 'containsLetters', 'containsDigits', 'expiresIn',
  membershipSysFields(tokenCodePolicies),
]);

@Injectable()
export class TokenCodePolicyRepository extends MembershipScopedRepository<TokenCodePolicyRow, NewTokenCodePolicyRow, TokenCodePolicyChanges> {
  protected override readonly resource = { table: tokenCodePolicies, schema: TOKEN_CODE_POLICY_QUERY_SCHEMA, toResponse: toTokenCodePolicyResponse };

  /**
   * Whether the membership names one of these policies as its `code_policy`. The membership row is
   * locked (share) so that naming a policy and deleting it cannot both commit.
   */
  async inUse(membershipId: string, slugs: readonly string[]): Promise<boolean> {
    if (slugs.length === 0) return false;
    const [row] = await this.database.db
      .select({ codePolicy: memberships.codePolicy })
      .from(memberships)
      .where(eq(memberships.id, membershipId))
      .for('share');
    return row?.codePolicy !== null && row?.codePolicy !== undefined && slugs.includes(row.codePolicy);
  }

  /** The policies with these ids (the ones a bulk delete would remove), for the in-use check. */
  async findByIds(membershipId: string, ids: readonly string[]): Promise<TokenCodePolicyRow[]> {
    if (ids.length === 0) return [];
    return this.database.db
      .select()
      .from(tokenCodePolicies)
      .where(and(this.scope(membershipId), inArray(tokenCodePolicies.id, [...ids])))
      .for('update');
  }
}
