import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { TokensModule } from '../tokens/tokens.module';
import { UserTypesModule } from '../user-types/user-types.module';
import { ActivationIssuer } from '../recovery/activation-issuer';
import { ChallengeTokens } from '../recovery/challenge-tokens';
import { UserChallengeRepository } from '../recovery/user-challenge.repository';
import { SignInModule } from '../sign-in/sign-in.module';
import { PasswordCheckController } from './password-check.controller';
import { PasswordHasherModule } from './password-hasher.module';
import { UserRepository } from './user.repository';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';

@Module({
  imports: [UserTypesModule, MembershipStoreModule, CallerPermissionsModule, EventsModule, PasswordHasherModule, TokensModule, SignInModule],
  controllers: [UsersController, PasswordCheckController],
  // The challenge store lives here because creating and changing users opens and ends challenges.
  providers: [UserRepository, UsersService, UserChallengeRepository, ChallengeTokens, ActivationIssuer],
  exports: [UserRepository, UsersService, UserChallengeRepository, ChallengeTokens, ActivationIssuer],
})
export class UsersModule {}
