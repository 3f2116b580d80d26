import { Module } from '@nestjs/common';
import { PasswordHasher } from './password-hasher';

/** The one argon2id hasher (its thread pool and decoy hash), for users, tokens and memberships. */
@Module({
  providers: [PasswordHasher],
  exports: [PasswordHasher],
})
export class PasswordHasherModule {}
