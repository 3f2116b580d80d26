import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { TokensModule } from '../tokens/tokens.module';
import { PasswordHasherModule } from '../users/password-hasher.module';
import { UsersModule } from '../users/users.module';
import { SignInModule } from '../sign-in/sign-in.module';
import { RecoveryController } from './recovery.controller';
import { RecoveryService } from './recovery.service';

/** Reset, OTP, set-password and activation routes; the challenge store and tokens come from UsersModule. */
@Module({
  imports: [UsersModule, TokensModule, EventsModule, MembershipStoreModule, PasswordHasherModule, SignInModule],
  controllers: [RecoveryController],
  providers: [RecoveryService],
})
export class RecoveryModule {}
