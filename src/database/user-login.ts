import { eq, inArray, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { users } from './schema';

/**
 * The one rule of login matching (contract "Sign-in"), for the sign-in lookup and for the login
 * uniqueness check. A login names the user whose username equals it case-insensitively, or
 * whose e-mail address equals it. E-mail addresses are stored in lower case, so callers lower-case
 * the login.
 */
const loginUsername = sql`lower(${users.username})`;

/** The user one login names: a lower-cased string, or a prepared statement's placeholder. */
export function userHasLogin(login: string | Placeholder): SQL {
  return sql`(${loginUsername} = ${login} or ${eq(users.emailAddress, login)})`;
}

/** The users any of these lower-cased logins names. */
export function userHasAnyLogin(logins: readonly string[]): SQL {
  return sql`(${inArray(loginUsername, [...logins])} or ${inArray(users.emailAddress, [...logins])})`;
}
