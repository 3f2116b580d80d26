import { Global, Module } from '@nestjs/common';
import { ActivationIssuer } from '../recovery/activation-issuer';
import { ChallengeTokens } from '../recovery/challenge-tokens';
import { UserChallengeRepository } from '../recovery/user-challenge.repository';
import { UserTypesModule } from '../user-types/user-types.module';
import { PasswordCheckController } from './password-check.controller';
import { UserRepository } from './user.repository';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';

@Global()
@Module({
  imports: [UserTypesModule],
  controllers: [UsersController, PasswordCheckController],
  // The challenge store lives here because creating and changing users opens and ends challenges.
  providers: [UserRepository, UsersService, UserChallengeRepository, ChallengeTokens, ActivationIssuer],
  exports: [UserRepository, UserChallengeRepository, ChallengeTokens, ActivationIssuer],
})
export class UsersModule {}
