import type { UserRecord } from '../database/schema';

/** The user's standard claims the granted scopes release (OpenID Connect Core 5.4), for ID tokens and userinfo. */
export function userClaims(user: UserRecord, scopes: readonly string[]): Record<string, string | boolean> {
  const claims: Record<string, string | boolean> = {};
  if (scopes.includes('profile')) {
    const name = [user.firstname, user.lastname].filter(Boolean).join(' ');
    if (name) claims.name = name;
    if (user.firstname) claims.given_name = user.firstname;
    if (user.lastname) claims.family_name = user.lastname;
    claims.preferred_username = user.username;
  }
  if (scopes.includes('email')) {
    claims.email = user.emailAddress;
    // True only once the address was proven (activation or reset by mail, a provider's verified claim).
    claims.email_verified = user.emailVerifiedAt !== null;
  }
  return claims;
}
