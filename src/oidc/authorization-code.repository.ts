import { Inject, Injectable } from '@nestjs/common';
import { and, eq, getTableColumns, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../database/database';
import { oidcAuthorizationCodes, type OidcAuthorizationCodeRow, users, type UserRecord } from '../database/schema';
import { userRecordColumns } from '../sessions/token-session.repository';

export type NewAuthorizationCode = typeof oidcAuthorizationCodes.$inferInsert & { id: string; expiresAt: Date };

/** A code as its exchange reads it, with the user it signed in (null once deleted). */
export interface FoundAuthorizationCode {
  code: OidcAuthorizationCodeRow;
  user: UserRecord | null;
}

/**
 * The exchange's read of a code with its user in one round trip, prepared once (PostgreSQL plans
 * it once per connection instead of at every exchange). The issuing statement uses the code up
 * (TokenSessionRepository.issue).
 */
function prepareExchangeStatements(db: Database['db']) {
  const byDigest = and(eq(oidcAuthorizationCodes.membershipId, sql.placeholder('membershipId')), eq(oidcAuthorizationCodes.id, sql.placeholder('digest')));
  return {
    find: db
      .select({ code: getTableColumns(oidcAuthorizationCodes), user: userRecordColumns })
      .from(oidcAuthorizationCodes)
      .leftJoin(users, and(eq(users.id, oidcAuthorizationCodes.userId), eq(users.membershipId, oidcAuthorizationCodes.membershipId)))
      .where(byDigest)
      .limit(1)
      .prepare('oidc_code_by_digest'),
  };
}

/** Authorization codes by the digest of the code (`oidc_authorization_codes`). */
@Injectable()
export class AuthorizationCodeRepository {
  private readonly exchange: ReturnType<typeof prepareExchangeStatements>;

  constructor(@Inject(DATABASE) private readonly database: Database) {
    this.exchange = prepareExchangeStatements(database.db);
  }

  async insert(row: NewAuthorizationCode): Promise<void> {
    await this.database.db.insert(oidcAuthorizationCodes).values(row);
  }

  /** The code whatever its state (a used or expired one matters: its reuse revokes what it issued), with its user. */
  async find(membershipId: string, digest: string): Promise<FoundAuthorizationCode | undefined> {
    const [row] = await this.exchange.find.execute({ membershipId, digest });
    return row;
  }
}
