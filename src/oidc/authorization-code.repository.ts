import { Inject, Injectable } from '@nestjs/common';
import { and, eq, getTableColumns, isNull, sql } from 'drizzle-orm';
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
 * The two statements of every code exchange, prepared once (PostgreSQL plans each once per
 * connection instead of at every exchange): the code with its user in one round trip, and the
 * conditional use.
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
    consume: db
      .update(oidcAuthorizationCodes)
      .set({ consumedAt: sql`now()`, issuedTokenId: sql`${sql.placeholder('issuedTokenId')}` })
      .where(and(byDigest, isNull(oidcAuthorizationCodes.consumedAt)))
      .returning({ id: oidcAuthorizationCodes.id })
      .prepare('oidc_code_consume'),
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

  /**
   * Marks the code used and names the token record its exchange is about to issue, only if it was
   * unused: of two exchanges at once one wins, and the other knows which grant to revoke.
   */
  async consume(membershipId: string, digest: string, issuedTokenId: string): Promise<boolean> {
    const updated = await this.exchange.consume.execute({ membershipId, digest, issuedTokenId });
    return updated.length > 0;
  }
}
