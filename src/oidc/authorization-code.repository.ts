import { Inject, Injectable } from '@nestjs/common';
import { and, eq, getTableColumns, inArray, isNull, sql } from 'drizzle-orm';
import { DATABASE, type Database, queryRows } from '../database/database';
import { type ApplicationRow, applications, oidcAuthorizationCodes, type OidcAuthorizationCodeRow, oidcConsents, users, type UserRecord } from '../database/schema';
import { userRecordColumns } from '../sessions/token-session.repository';

export type NewAuthorizationCode = typeof oidcAuthorizationCodes.$inferInsert & { id: string; expiresAt: Date };

/** A code as its exchange reads it, with the user it signed in (null once deleted). */
export interface FoundAuthorizationCode {
  code: OidcAuthorizationCodeRow;
  user: UserRecord | null;
}

/**
 * The exchange's reads, prepared once (PostgreSQL plans each once per connection instead of at
 * every exchange). `withClient` is the exchange's one read: the claimed client's application, and
 * the code with its user when there is one, in one round trip (the application's row is kept by
 * the right join even without a code). `find` reads the code alone, to tell a refusal apart. The
 * issuing statement uses the code up (TokenSessionRepository.issue).
 */
function prepareExchangeStatements(db: Database['db']) {
  const byDigest = and(eq(oidcAuthorizationCodes.membershipId, sql.placeholder('membershipId')), eq(oidcAuthorizationCodes.id, sql.placeholder('digest')));
  const ofItsUser = and(eq(users.id, oidcAuthorizationCodes.userId), eq(users.membershipId, oidcAuthorizationCodes.membershipId));
  return {
    find: db
      .select({ code: getTableColumns(oidcAuthorizationCodes), user: userRecordColumns })
      .from(oidcAuthorizationCodes)
      .leftJoin(users, ofItsUser)
      .where(byDigest)
      .limit(1)
      .prepare('oidc_code_by_digest'),
    withClient: db
      .select({ application: getTableColumns(applications), code: getTableColumns(oidcAuthorizationCodes), user: userRecordColumns })
      .from(oidcAuthorizationCodes)
      .leftJoin(users, ofItsUser)
      .rightJoin(applications, byDigest)
      .where(eq(applications.id, sql.placeholder('clientId')))
      .limit(1)
      .prepare('oidc_code_with_client'),
  };
}

/** Authorization codes by the digest of the code (`oidc_authorization_codes`). */
@Injectable()
export class AuthorizationCodeRepository {
  private readonly exchange: ReturnType<typeof prepareExchangeStatements>;

  constructor(@Inject(DATABASE) private readonly database: Database) {
    this.exchange = prepareExchangeStatements(database.db);
  }

  /**
   * Stores a code. With `consentRequired`, only while the user's remembered consent to the client
   * covers the code's scopes, read `for share` in the same statement: a withdrawal under way (which
   * deletes the consent, then uses up the client's codes) is waited for and its deletion seen, and
   * one that comes later waits for this code and uses it up. Answers whether the code was stored.
   */
  async insert(row: NewAuthorizationCode, consentRequired: boolean): Promise<boolean> {
    if (!consentRequired) {
      await this.database.db.insert(oidcAuthorizationCodes).values(row);
      return true;
    }
    const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
    const stored = await queryRows<{ id: string }>(
      this.database.db,
      sql`insert into ${oidcAuthorizationCodes}
            (id, membership_id, client_id, user_id, session_id, redirect_uri, code_challenge, scopes, nonce, resource, auth_time, amr, expires_at)
          select ${row.id}::text, ${row.membershipId}::text, ${row.clientId}::text, ${row.userId}::text, ${row.sessionId}::text,
            ${row.redirectUri}::text, ${row.codeChallenge}::text, ${json(row.scopes)}::jsonb, ${row.nonce ?? null}::text,
            ${row.resource ?? null}::text, ${row.authTime.toISOString()}::timestamptz, ${json(row.amr)}::jsonb, ${row.expiresAt.toISOString()}::timestamptz
          from ${oidcConsents}
          where membership_id = ${row.membershipId}::text and user_id = ${row.userId}::text and client_id = ${row.clientId}::text
            and scopes @> ${json(row.scopes)}::jsonb
          for share
          returning id`,
    );
    return stored.length > 0;
  }

  /**
   * The application `clientId` names (undefined: none) and, when `digest` names a code of the
   * membership, that code whatever its state, with its user.
   */
  async findWithClient(membershipId: string, digest: string, clientId: string): Promise<{ application: ApplicationRow | undefined; code: FoundAuthorizationCode | undefined }> {
    const [row] = await this.exchange.withClient.execute({ membershipId, digest, clientId });
    if (!row) return { application: undefined, code: undefined };
    return { application: row.application, code: row.code ? { code: row.code, user: row.user } : undefined };
  }

  /**
   * Uses up the user's codes for these clients that were not exchanged yet (consent to the clients
   * withdrawn): an exchange then answers invalid_grant and issues nothing. Runs in the caller's transaction.
   */
  async useUpOfClients(membershipId: string, userId: string, clientIds: readonly string[]): Promise<void> {
    if (!clientIds.length) return;
    await this.database.db
      .update(oidcAuthorizationCodes)
      .set({ consumedAt: new Date() })
      .where(
        and(
          eq(oidcAuthorizationCodes.membershipId, membershipId),
          eq(oidcAuthorizationCodes.userId, userId),
          inArray(oidcAuthorizationCodes.clientId, [...clientIds]),
          isNull(oidcAuthorizationCodes.consumedAt),
        ),
      );
  }

  /** The code whatever its state (a used or expired one matters: its reuse revokes what it issued), with its user. */
  async find(membershipId: string, digest: string): Promise<FoundAuthorizationCode | undefined> {
    const [row] = await this.exchange.find.execute({ membershipId, digest });
    return row;
  }
}
