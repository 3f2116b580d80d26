import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { providers, type ProviderRow } from '../database/schema';
import { membershipSysFields, namedResourceFields, type QuerySchema } from '../common/query';
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
    ...namedResourceFields(providers, { sortableId: false }),
    type: { sql: sql`${providers.type}`, type: 'string' },
    issuer: { sql: sql`${providers.issuer}`, type: 'string' },
    client_id: { sql: sql`${providers.clientId}`, type: 'string' },
    has_client_secret: { sql: sql`(${providers.clientSecret} is not null)`, type: 'boolean' },
    default_role: { sql: sql`${providers.defaultRole}`, type: 'string' },
    default_user_type: { sql: sql`${providers.defaultUserType}`, type: 'string' },
    is_active: { sql: sql`${providers.isActive}`, type: 'boolean' },
    trust_email: { sql: sql`${providers.trustEmail}`, type: 'boolean' },
    ...membershipSysFields(providers),
  },
  hidden: ['client_secret'],
};

/** deleteByIds removes the providers and, by the foreign key's cascade, their identity links; users stay. */
@Injectable()
export class ProviderRepository extends MembershipScopedRepository<ProviderRow, NewProviderRow, ProviderChanges> {
  constructor(@Inject(DATABASE) database: Database) {
    super(database, { table: providers, schema: PROVIDER_QUERY_SCHEMA, toResponse: toProviderResponse });
  }
}
