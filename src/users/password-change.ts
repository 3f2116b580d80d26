import { Injectable } from '@nestjs/common';
import type { UserRow } from '../database/schema';
import type { RecordEvent } from '../events/event-recorder';
import { TokenRevoker } from '../sessions/token-revoker';
import { PasswordHasher } from './password-hasher';
import { toUserResponse } from './user.mapper';
import { UserRepository } from './user.repository';

export interface NewPassword {
  membershipId: string;
  userId: string;
  /** From `hash`, made before the transaction. */
  passwordHash: string;
  /** Who changes it: the caller, or the user itself for a reset. */
  utilizerId: string;
  /** The reason each revoked token record records. */
  revokeReason: string;
  /** The caller's own session, spared when users change their own password. */
  exceptSessionId?: string;
}

/**
 * The one password-change sequence, for both a user changing a password (users/) and a reset
 * (recovery/). The new password is hashed first, outside any transaction, because argon2 takes
 * tens of milliseconds and must not hold a connection. Then, in the caller's transaction, the
 * hash is stored, the user's sessions are revoked and UserPasswordChanged is recorded.
 */
@Injectable()
export class PasswordChange {
  constructor(
    private readonly hasher: PasswordHasher,
    private readonly users: UserRepository,
    private readonly revoker: TokenRevoker,
  ) {}

  hash(password: string): Promise<string> {
    return this.hasher.hash(password);
  }

  /** Runs in the caller's transaction (`record` belongs to it); undefined when the user does not exist. */
  async apply(record: RecordEvent, change: NewPassword): Promise<UserRow | undefined> {
    const { membershipId, userId, utilizerId } = change;
    const row = await this.users.update(membershipId, userId, { passwordHash: change.passwordHash, modifiedAt: new Date(), modifiedBy: utilizerId });
    if (!row) return undefined;
    await this.revoker.revokeAllOfUser(record, membershipId, userId, utilizerId, change.revokeReason, { exceptSessionId: change.exceptSessionId });
    record({ membershipId, eventType: 'UserPasswordChanged', utilizerId, document: toUserResponse(row) });
    return row;
  }
}
