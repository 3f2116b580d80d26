import { Module } from '@nestjs/common';
import { TokenRevoker } from './token-revoker';
import { TokenSessionRepository } from './token-session.repository';

/**
 * The session store and its revocation (architecture "sessions/"): below users, which ends a
 * user's sessions on a password change, a freeze or a deletion, and below tokens, which opens,
 * refreshes and lists them. It imports no feature room above it.
 */
@Module({
  providers: [TokenSessionRepository, TokenRevoker],
  exports: [TokenSessionRepository, TokenRevoker],
})
export class SessionsModule {}
