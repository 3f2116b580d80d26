import { Inject, Injectable } from '@nestjs/common';
import { and, eq, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { providers, type ProviderRow } from '../database/schema';
import type { QuerySchema } from '../common/query';
import { toProviderResponse } from './provider.mapper';

export type NewProviderRow = typeof providers.$inferInsert;
/** The fields a replace (PUT) writes; the slug is immutable. */
export type ProviderChanges = Pick<
  NewProviderRow,
  'name' | 'description' | 'type' | 'issuer' | 'clientId' | 'clientSecret' | 'defaultRole' | 'defaultUserType' | 'isActive' | 'trustEmail' | 'modifiedAt' | 'modifiedBy'
>;

export const PROVIDER_SORTABLE_FIELDS = 'slug or sys.created_at, optionally followed by asc or desc; default creation order';

/** Sortable: what an index serves inside one membership (slug unique index, created index). */
export const PROVIDER_QUERY_SCHEMA: QuerySchema = {
  fields: {
    _id: { sql: sql`${providers.id}`, type: 'string' },
    name: { sql: sql`${providers.name}`, type: 'string' },
    slug: { sql: sql`${providers.slug}`, type: 'string', sortable: true },
    description: { sql: sql`${providers.description}`, type: 'string' },
    type: { sql: sql`${providers.type}`, type: 'string' },
    issuer: { sql: sql`${providers.issuer}`, type: 'string' },
    client_id: { sql: sql`${providers.clientId}`, type: 'string' },
    has_client_secret: { sql: sql`(${providers.clientSecret} is not null)`, type: 'boolean' },
    default_role: { sql: sql`${providers.defaultRole}`, type: 'string' },
    default_user_type: { sql: sql`${providers.defaultUserType}`, type: 'string' },
    is_active: { sql: sql`${providers.isActive}`, type: 'boolean' },
    trust_email: { sql: sql`${providers.trustEmail}`, type: 'boolean' },
    membership_id: { sql: sql`${providers.membershipId}`, type: 'string' },
    'sys.created_at': { sql: sql`${providers.createdAt}`, type: 'timestamp', sortable: true },
    'sys.created_by': { sql: sql`${providers.createdBy}`, type: 'string' },
    'sys.modified_at': { sql: sql`${providers.modifiedAt}`, type: 'timestamp' },
    'sys.modified_by': { sql: sql`${providers.modifiedBy}`, type: 'string' },
  },
  hidden: ['client_secret'],
};

/** deleteByIds removes the providers and, by the foreign key's cascade, their identity links; users stay. */
@Injectable()
export class ProviderRepository extends MembershipScopedRepository<ProviderRow, NewProviderRow, ProviderChanges> {
  constructor(@Inject(DATABASE) database: Database) {
    super(database, { table: providers, schema: PROVIDER_QUERY_SCHEMA, toResponse: toProviderResponse });
  }

  async findBySlug(membershipId: string, slug: string): Promise<ProviderRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(providers)
      .where(and(this.scope(membershipId), eq(providers.slug, slug)))
      .limit(1);
    return row;
  }
}
