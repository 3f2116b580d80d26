import { Inject, Injectable } from '@nestjs/common';
import { and, asc, eq, sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database, type Executor, type Tx } from '../database/database';
import { providers, type ProviderRow } from '../database/schema';
import { deleteByIds, runListQuery, type ListPage, type ListRequest, type QuerySchema } from '../common/query';
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

const DEFAULT_SORT: SQL = sql`${asc(providers.createdAt)}, ${asc(providers.id)}`;
const scope = (membershipId: string): SQL => eq(providers.membershipId, membershipId);

@Injectable()
export class ProviderRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  async findById(membershipId: string, id: string, executor: Executor = this.database.db): Promise<ProviderRow | undefined> {
    const [row] = await executor
      .select()
      .from(providers)
      .where(and(scope(membershipId), eq(providers.id, id)))
      .limit(1);
    return row;
  }

  async findBySlug(membershipId: string, slug: string): Promise<ProviderRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(providers)
      .where(and(scope(membershipId), eq(providers.slug, slug)))
      .limit(1);
    return row;
  }

  /** The row, locked until the transaction ends, so concurrent replaces of one provider serialize. */
  async findByIdForUpdate(membershipId: string, id: string, tx: Tx): Promise<ProviderRow | undefined> {
    const [row] = await tx
      .select()
      .from(providers)
      .where(and(scope(membershipId), eq(providers.id, id)))
      .limit(1)
      .for('update');
    return row;
  }

  list(membershipId: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery<ProviderRow>({
      executor: this.database.db,
      table: providers,
      idColumn: providers.id,
      scope: scope(membershipId),
      schema: PROVIDER_QUERY_SCHEMA,
      request,
      defaultSort: DEFAULT_SORT,
      toResponse: toProviderResponse,
    });
  }

  async insert(membershipId: string, tx: Tx, row: Omit<NewProviderRow, 'membershipId'>): Promise<ProviderRow> {
    const [created] = await tx
      .insert(providers)
      .values({ ...row, membershipId })
      .returning();
    return created;
  }

  async replace(membershipId: string, tx: Tx, id: string, changes: ProviderChanges): Promise<ProviderRow> {
    const [updated] = await tx
      .update(providers)
      .set(changes)
      .where(and(scope(membershipId), eq(providers.id, id)))
      .returning();
    return updated;
  }

  /** Deletes the providers and, by the foreign key's cascade, their identity links; users stay. */
  deleteByIds(membershipId: string, tx: Tx, ids: readonly string[]): Promise<ProviderRow[]> {
    return deleteByIds<ProviderRow>(tx, providers, providers.id, scope(membershipId), ids);
  }
}
