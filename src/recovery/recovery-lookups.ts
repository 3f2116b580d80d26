import { DomainError, validationError } from '../common/errors';
import type { MembershipRow, UserRow } from '../database/schema';
import type { MembershipCache } from '../memberships/membership-cache';
import type { UserRepository } from '../users/user.repository';
import type { ResetLoginDto } from './recovery.dto';

/** Whom a reset request or an OTP names: an e-mail address or a username. */
export type Login = { emailAddress: string } | { username: string };

/** Exactly one of `email_address` and `username`. */
export function loginOf(body: ResetLoginDto): Login {
  const hasEmail = body.email_address !== undefined;
  const hasUsername = body.username !== undefined;
  if (hasEmail === hasUsername) throw validationError(hasEmail ? 'username' : 'email_address', 'send exactly one of email_address and username');
  return body.email_address !== undefined ? { emailAddress: body.email_address } : { username: body.username as string };
}

export function findUserByLogin(users: UserRepository, membershipId: string, login: Login): Promise<UserRow | undefined> {
  return 'emailAddress' in login ? users.findByEmail(membershipId, login.emailAddress) : users.findByUsername(membershipId, login.username);
}

/** The membership a recovery route names, or 404 MembershipNotFound. */
export async function requireMembership(memberships: MembershipCache, membershipId: string): Promise<MembershipRow> {
  const membership = await memberships.get(membershipId);
  if (!membership) throw new DomainError('MembershipNotFound', 'The membership does not exist');
  return membership;
}
