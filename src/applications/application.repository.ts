import { Inject, Injectable } from '@nestjs/common';
import { and, eq, ilike, or, sql, type SQL } from 'drizzle-orm';
import { DATABASE, type Database, type Executor } from '../database/database';
import { applications, type ApplicationRow } from '../database/schema';
import { deleteByIds, runListQuery, type ListPage, type ListRequest, type QuerySchema } from '../common/query';
import { likePattern } from '../roles/role.repository';

export const APPLICATION_QUERY_SCHEMA: QuerySchema = {
  fields: {
    _id: { sql: sql`${applications.id}`, type: 'string', sortable: true },
    name: { sql: sql`${applications.name}`, type: 'string' },
    slug: { sql: sql`${applications.slug}`, type: 'string', sortable: true },
    description: { sql: sql`${applications.description}`, type: 'string' },
    role: { sql: sql`${applications.role}`, type: 'string' },
    permissions: { sql: sql`${applications.permissions}`, type: 'string_array' },
    forbidden: { sql: sql`${applications.forbidden}`, type: 'string_array' },
    is_active: { sql: sql`${applications.isActive}`, type: 'boolean' },
    membership_id: { sql: sql`${applications.membershipId}`, type: 'string' },
    'sys.created_at': { sql: sql`${applications.createdAt}`, type: 'timestamp', sortable: true },
    'sys.created_by': { sql: sql`${applications.createdBy}`, type: 'string' },
    'sys.modified_at': { sql: sql`${applications.modifiedAt}`, type: 'timestamp' },
    'sys.modified_by': { sql: sql`${applications.modifiedBy}`, type: 'string' },
  },
  hidden: ['secret', 'secret_digest'],
};

export const APPLICATION_SORTABLE_FIELDS = '_id, slug, sys.created_at';

/** The fields a PUT replaces. */
export type ApplicationContent = Pick<ApplicationRow, 'name' | 'slug' | 'description' | 'role' | 'permissions' | 'forbidden' | 'isActive'>;

function prepareApplicationById(db: Database['db']) {
  return db.select().from(applications).where(eq(applications.id, sql.placeholder('id'))).limit(1).prepare('application_by_id');
}

@Injectable()
export class ApplicationRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {
    this.byIdQuery = prepareApplicationById(database.db);
  }

  /** Prepared once: every Basic-token request runs it. */
  private readonly byIdQuery: ReturnType<typeof prepareApplicationById>;

  /** By id alone: Basic tokens name only the application, and ids are unique across memberships. */
  async findAnyById(id: string): Promise<ApplicationRow | undefined> {
    const [row] = await this.byIdQuery.execute({ id });
    return row;
  }

  async findById(membershipId: string, id: string, executor: Executor = this.database.db): Promise<ApplicationRow | undefined> {
    const [row] = await executor
      .select()
      .from(applications)
      .where(and(eq(applications.membershipId, membershipId), eq(applications.id, id)))
      .limit(1);
    return row;
  }

  /** Locks the row until the transaction ends, so concurrent updates and rotations of one application are serialized. */
  async lockById(membershipId: string, id: string, executor: Executor = this.database.db): Promise<ApplicationRow | undefined> {
    const [row] = await executor
      .select()
      .from(applications)
      .where(and(eq(applications.membershipId, membershipId), eq(applications.id, id)))
      .limit(1)
      .for('update');
    return row;
  }

  async insert(row: typeof applications.$inferInsert, executor: Executor = this.database.db): Promise<ApplicationRow> {
    const [created] = await executor.insert(applications).values(row).returning();
    return created;
  }

  async update(membershipId: string, id: string, content: ApplicationContent, modifiedBy: string, executor: Executor = this.database.db): Promise<ApplicationRow> {
    const [row] = await executor
      .update(applications)
      .set({ ...content, modifiedAt: new Date(), modifiedBy })
      .where(and(eq(applications.membershipId, membershipId), eq(applications.id, id)))
      .returning();
    return row;
  }

  /** The Basic authenticator reads the digest on every request, so the old secret fails from the commit on. */
  async replaceSecretDigest(membershipId: string, id: string, secretDigest: string, modifiedBy: string, executor: Executor = this.database.db): Promise<ApplicationRow> {
    const [row] = await executor
      .update(applications)
      .set({ secretDigest, modifiedAt: new Date(), modifiedBy })
      .where(and(eq(applications.membershipId, membershipId), eq(applications.id, id)))
      .returning();
    return row;
  }

  async deleteByIds(membershipId: string, ids: readonly string[], executor: Executor = this.database.db): Promise<ApplicationRow[]> {
    return deleteByIds<ApplicationRow>(executor, applications, applications.id, eq(applications.membershipId, membershipId), ids);
  }

  list(
    membershipId: string,
    request: ListRequest,
    toResponse: (row: ApplicationRow) => object,
    keyword?: string,
  ): Promise<ListPage<Record<string, unknown>>> {
    let scope: SQL | undefined = eq(applications.membershipId, membershipId);
    if (keyword !== undefined) {
      const pattern = likePattern(keyword);
      scope = and(scope, or(ilike(applications.name, pattern), ilike(applications.slug, pattern), ilike(applications.description, pattern)));
    }
    return runListQuery<ApplicationRow>({
      executor: this.database.db,
      table: applications,
      idColumn: applications.id,
      scope: scope ?? sql`false`,
      schema: APPLICATION_QUERY_SCHEMA,
      request,
      defaultSort: sql`${applications.createdAt} asc, ${applications.id} asc`,
      toResponse,
    });
  }
}
