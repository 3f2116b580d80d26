import { Inject, Injectable } from '@nestjs/common';
import { and, asc, eq, inArray, ne, or, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { DATABASE, type Database, type Executor } from '../database/database';
import { users, type UserRow } from '../database/schema';
import { userHasAnyLogin } from '../database/user-login';
import { deleteByIds, likePattern, queryFields, runListQuery, sysFields, type ListPage, type ListQuery, type ListRequest, type QueryField, type QuerySchema } from '../common/query';
import { propertyNameProblem } from '../user-types/custom-fields';
import { toUserResponse } from './user.mapper';

/** A timestamp as the API writes it (`2026-01-01T00:00:00.000Z`), whatever the session's time zone. */
function isoText(column: PgColumn): SQL {
  return sql`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** The user's own fields as `where`, `sort` and `select` name them (the API field names). */
const USER_FIELDS = queryFields(
  users,
  [
    'id', 'username', 'emailAddress', 'firstname', 'lastname', 'role', 'userType', 'permissions', 'forbidden', 'isActive', 'sourceProvider', 'membershipId',
    // The whole block as the API shows it, so that `select` and `where` can name it; its parts are fields of their own below.
    {
      sys: {
        sql: sql`jsonb_strip_nulls(jsonb_build_object('created_at', ${isoText(users.createdAt)}, 'created_by', ${users.createdBy}, 'modified_at', ${isoText(users.modifiedAt)}, 'modified_by', ${users.modifiedBy}))`,
        type: 'json',
      },
    },
    sysFields(users),
  ],
  { sortable: ['id', 'emailAddress', 'role'], stringArrays: ['permissions', 'forbidden'] },
);

const HIDDEN = ['password_hash', 'password'] as const;

/** How many field names of one request are looked at for custom fields; the translator bounds the rest. */
const MAX_COLLECTED_NAMES = 2000;

/** The first path segment of every field a `where` names, through `$and`/`$or`, bounded. */
function collectFieldNames(filter: unknown, names: Set<string>, depth: number, budget: { left: number }): void {
  if (depth > 9 || typeof filter !== 'object' || filter === null || Array.isArray(filter)) return;
  for (const key of Object.keys(filter)) {
    if (--budget.left < 0) return;
    const operand = (filter as Record<string, unknown>)[key];
    if (key === '$and' || key === '$or') {
      if (Array.isArray(operand)) for (const item of operand.slice(0, MAX_COLLECTED_NAMES)) collectFieldNames(item, names, depth + 1, budget);
    } else if (!key.startsWith('$')) {
      names.add(key.split('.')[0]);
    }
  }
}

/**
 * The query schema of one request: the user's own fields, plus each custom field the request
 * names. Custom fields sit at the top level of a user, so `{"department": "it"}` and
 * `{"address.city": "Oslo"}` filter on them; they compare as JSON and cannot be sorted on.
 * Only valid custom property names are added, so `password_hash` and other built-ins never are.
 */
export function userQuerySchema(request: Pick<ListRequest, 'where' | 'select'>): QuerySchema {
  const names = new Set<string>();
  const budget = { left: MAX_COLLECTED_NAMES };
  collectFieldNames(request.where, names, 1, budget);
  if (typeof request.select === 'object' && request.select !== null && !Array.isArray(request.select)) {
    for (const key of Object.keys(request.select).slice(0, MAX_COLLECTED_NAMES)) names.add(key.split('.')[0]);
  }
  const fields: Record<string, QueryField> = { ...USER_FIELDS };
  for (const name of names) {
    if (Object.hasOwn(fields, name) || propertyNameProblem(name) !== undefined) continue;
    fields[name] = { sql: sql`(${users.customFields} -> ${name}::text)`, type: 'json' };
  }
  return { fields, hidden: HIDDEN };
}

/** The users list of a membership, for runListQuery (and for explaining its plans); `condition` narrows it (search). */
export function userListQuery(executor: Executor, membershipId: string, request: ListRequest, condition?: SQL): ListQuery<UserRow> {
  const scope = eq(users.membershipId, membershipId);
  return {
    executor,
    table: users,
    idColumn: users.id,
    scope: condition ? sql`(${scope} and ${condition})` : scope,
    schema: userQuerySchema(request),
    request,
    defaultSort: sql`${asc(users.createdAt)}, ${asc(users.id)}`,
    toResponse: toUserResponse,
  };
}

export type UserChanges = Partial<
  Pick<
    typeof users.$inferInsert,
    | 'username'
    | 'emailAddress'
    | 'passwordHash'
    | 'firstname'
    | 'lastname'
    | 'role'
    | 'userType'
    | 'permissions'
    | 'forbidden'
    | 'isActive'
    | 'customFields'
    | 'modifiedAt'
    | 'modifiedBy'
  >
>;

@Injectable()
export class UserRepository {
  constructor(@Inject(DATABASE) private readonly database: Database) {}

  private scope(membershipId: string): SQL {
    return eq(users.membershipId, membershipId);
  }

  /** The one user of the membership that `condition` picks, if any. */
  private async findOne(membershipId: string, condition: SQL): Promise<UserRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(users)
      .where(and(this.scope(membershipId), condition))
      .limit(1);
    return row;
  }

  findById(membershipId: string, id: string): Promise<UserRow | undefined> {
    return this.findOne(membershipId, eq(users.id, id));
  }

  /** The row, locked until the transaction ends, so concurrent updates of one user apply one after the other. */
  async findByIdForUpdate(membershipId: string, id: string): Promise<UserRow | undefined> {
    const [row] = await this.database.db
      .select()
      .from(users)
      .where(and(this.scope(membershipId), eq(users.id, id)))
      .limit(1)
      .for('update');
    return row;
  }

  /** The user with this e-mail address (stored lower-case), for linking a provider sign-in. */
  findByEmail(membershipId: string, emailAddress: string): Promise<UserRow | undefined> {
    return this.findOne(membershipId, eq(users.emailAddress, emailAddress.toLowerCase()));
  }

  /** The user with this username (case-insensitive, as sign-in), for a password reset. */
  findByUsername(membershipId: string, username: string): Promise<UserRow | undefined> {
    return this.findOne(membershipId, sql`lower(${users.username}) = ${username.toLowerCase()}`);
  }

  /**
   * Another user whose username or e-mail address equals either given one (case-insensitive).
   * Sign-in takes either, so a username may not be someone else's e-mail address and vice versa.
   */
  async findLoginConflict(
    membershipId: string,
    username: string,
    emailAddress: string,
    { exceptId }: { exceptId?: string } = {},
  ): Promise<UserRow | undefined> {
    const logins = [...new Set([username.toLowerCase(), emailAddress.toLowerCase()])];
    const [row] = await this.database.db
      .select()
      .from(users)
      .where(
        and(
          this.scope(membershipId),
          userHasAnyLogin(logins),
          exceptId === undefined ? undefined : ne(users.id, exceptId),
        ),
      )
      .limit(1);
    return row;
  }

  list(membershipId: string, request: ListRequest, condition?: SQL): Promise<ListPage<Record<string, unknown>>> {
    return runListQuery(userListQuery(this.database.db, membershipId, request, condition));
  }

  /** Users whose username, e-mail address, first or last name contains the keyword (case-insensitive). */
  search(membershipId: string, keyword: string, request: ListRequest): Promise<ListPage<Record<string, unknown>>> {
    const pattern = likePattern(keyword);
    const matches = or(
      sql`${users.username} ilike ${pattern}`,
      sql`${users.emailAddress} ilike ${pattern}`,
      sql`${users.firstname} ilike ${pattern}`,
      sql`${users.lastname} ilike ${pattern}`,
    );
    return this.list(membershipId, request, matches);
  }

  async insert(row: typeof users.$inferInsert): Promise<UserRow> {
    const [created] = await this.database.db.insert(users).values(row).returning();
    return created;
  }

  /**
   * When the user's address was last proven (a mailed token used, a provider's verified claim), or
   * null when it changed: the OpenID Provider's `email_verified`. Only while the address is still
   * `emailAddress`, so a proof of an old address never marks a new one.
   */
  async setEmailVerified(membershipId: string, id: string, emailAddress: string, verifiedAt: Date | null): Promise<void> {
    await this.database.db
      .update(users)
      .set({ emailVerifiedAt: verifiedAt })
      .where(and(this.scope(membershipId), eq(users.id, id), eq(users.emailAddress, emailAddress)));
  }

  async update(membershipId: string, id: string, changes: UserChanges): Promise<UserRow | undefined> {
    const [updated] = await this.database.db
      .update(users)
      .set(changes)
      .where(and(this.scope(membershipId), eq(users.id, id)))
      .returning();
    return updated;
  }

  /** The ids among these that name users of the membership. */
  async existingIds(membershipId: string, ids: readonly string[]): Promise<string[]> {
    if (!ids.length) return [];
    const rows = await this.database.db
      .select({ id: users.id })
      .from(users)
      .where(and(this.scope(membershipId), inArray(users.id, [...ids])));
    return rows.map((row) => row.id);
  }

  deleteByIds(membershipId: string, ids: readonly string[]): Promise<UserRow[]> {
    return deleteByIds<UserRow>(this.database.db, users, users.id, this.scope(membershipId), ids);
  }

  /**
   * Serializes writes of users of one type until the transaction ends, so that two users cannot
   * both take the same value of a unique custom field. Only writers of that type wait.
   */
  async lockUserType(membershipId: string, userType: string): Promise<void> {
    await this.database.db.execute(sql`select pg_advisory_xact_lock(hashtextextended(${`user-type:${membershipId}:${userType}`}::text, 0))`);
  }

  /** Another user of the type whose custom field `name` holds `value`. */
  async findCustomFieldHolder(
    membershipId: string,
    userType: string,
    name: string,
    value: unknown,
    exceptId?: string,
  ): Promise<string | undefined> {
    const [row] = await this.database.db
      .select({ id: users.id })
      .from(users)
      .where(
        and(
          this.scope(membershipId),
          eq(users.userType, userType),
          sql`(${users.customFields} -> ${name}::text) = ${JSON.stringify(value)}::jsonb`,
          exceptId === undefined ? undefined : ne(users.id, exceptId),
        ),
      )
      .limit(1);
    return row?.id;
  }
}
