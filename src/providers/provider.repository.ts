import { Injectable } from '@nestjs/common';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { providers, type ProviderRow } from '../database/schema';
import { isSetField, membershipSysFields, namedResourceFields, querySchema } from '../common/query';
import { toProviderResponse } from './provider.mapper';

export type NewProviderRow = typeof providers.$inferInsert;
/** The fields a replace (PUT) writes; the slug is immutable. */
export type ProviderChanges = Pick<
  NewProviderRow,
  'name' | 'description' | 'type' | 'issuer' | 'clientId' | 'clientSecret' | 'defaultRole' | 'defaultUserType' | 'isActive' | 'trustEmail' | 'modifiedAt' | 'modifiedBy'
>;

export const PROVIDER_SORTABLE_FIELDS = 'slug or sys.created_at, optionally followed by asc or desc; default creation order';

/** Sortable: what an index serves inside one membership (slug unique index, created index). */
export const PROVIDER_QUERY_SCHEMA = querySchema(
  providers,
  [
    namedResourceFields(providers, { sortableId: false }),
    'type', 'issuer', 'clientId', { has_client_secret: isSetField(providers.clientSecret) }, 'defaultRole', 'defaultUserType', 'isActive', 'trustEmail',
    membershipSysFields(providers),
  ],
  { hidden: ['client_secret'] },
);

/** deleteByIds removes the providers and, by the foreign key's cascade, their identity links; users stay. */
@Injectable()
export class ProviderRepository extends MembershipScopedRepository<ProviderRow, NewProviderRow, ProviderChanges> {
  protected override readonly resource = { table: providers, schema: PROVIDER_QUERY_SCHEMA, toResponse: toProviderResponse };
}
