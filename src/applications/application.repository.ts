import { Inject, Injectable } from '@nestjs/common';
import { and, eq, isNull, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { applications, oidcClientTokens, type ApplicationRow, type OidcClientTokenRow } from '../database/schema';
import { MembershipScopedRepository } from '../common/crud/membership-scoped.repository';
import { membershipSysFields, namedResourceFields, querySchema, sortableFieldNames } from '../common/query';
import { toApplicationResponse } from './application.mapper';

export const APPLICATION_QUERY_SCHEMA = querySchema(
  applications,
  [
    namedResourceFields(applications, { sortableId: true }),
    'role', 'permissions', 'forbidden', 'isActive',
    membershipSysFields(applications),
  ],
  { stringArrays: ['permissions', 'forbidden'], hidden: ['secret', 'secret_digest'] },
);

export const APPLICATION_SORTABLE_FIELDS = sortableFieldNames(APPLICATION_QUERY_SCHEMA);

export type NewApplicationRow = typeof applications.$inferInsert;
/** The fields a PUT replaces. */
export type ApplicationContent = Pick<ApplicationRow, 'name' | 'slug' | 'description' | 'role' | 'permissions' | 'forbidden' | 'isActive' | 'oidc'>;
/** What a replace writes: the content or the secret's digest, and who changed it when. */
export type ApplicationChanges = Partial<ApplicationContent & Pick<ApplicationRow, 'secretDigest'>> & Pick<ApplicationRow, 'modifiedAt' | 'modifiedBy'>;

function prepareApplicationById(db: Database['db']) {
  return db.select().from(applications).where(eq(applications.id, sql.placeholder('id'))).limit(1).prepare('application_by_id');
}

@Injectable()
export class ApplicationRepository extends MembershipScopedRepository<ApplicationRow, NewApplicationRow, ApplicationChanges> {
  protected override readonly resource = { table: applications, schema: APPLICATION_QUERY_SCHEMA, toResponse: toApplicationResponse };

  constructor(@Inject(DATABASE) database: Database) {
    super(database);
    this.byIdQuery = prepareApplicationById(database.db);
  }

  /** Prepared once: every Basic-token request runs it. */
  private readonly byIdQuery: ReturnType<typeof prepareApplicationById>;

  /** By id alone: Basic tokens name only the application, and ids are unique across memberships. */
  async findAnyById(id: string): Promise<ApplicationRow | undefined> {
    const [row] = await this.byIdQuery.execute({ id });
    return row;
  }

  /** Replaces the content, stamped as modified now by `modifiedBy`. */
  update(membershipId: string, id: string, content: ApplicationContent, modifiedBy: string): Promise<ApplicationRow> {
    return this.replace(membershipId, id, { ...content, modifiedAt: new Date(), modifiedBy });
  }

  /** The Basic authenticator reads the digest on every request, so the old secret fails from the commit on. */
  replaceSecretDigest(membershipId: string, id: string, secretDigest: string, modifiedBy: string): Promise<ApplicationRow> {
    return this.replace(membershipId, id, { secretDigest, modifiedAt: new Date(), modifiedBy });
  }

  /**
   * Revokes the application's still-active client_credentials tokens of the OpenID Provider: a new
   * secret ends what the old one obtained, as it does for Basic (contract, "Revocation triggers").
   * The table belongs to the provider, which sits above; this one statement lives here as sessions'
   * `denyApprovedDeviceCodes` does, so that the rotation needs no port upwards.
   */
  revokeClientTokens(membershipId: string, id: string, revokedBy: string, reason: string): Promise<OidcClientTokenRow[]> {
    return this.database.db
      .update(oidcClientTokens)
      .set({ revokedAt: new Date(), revokedBy, revokeReason: reason })
      .where(and(eq(oidcClientTokens.membershipId, membershipId), eq(oidcClientTokens.clientId, id), isNull(oidcClientTokens.revokedAt)))
      .returning();
  }
}
