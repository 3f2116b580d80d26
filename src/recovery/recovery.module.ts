import { Global, Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { TokensModule } from '../tokens/tokens.module';
import { USER_CHALLENGES } from '../users/user-challenges';
import { UsersModule } from '../users/users.module';
import { SignInModule } from '../sign-in/sign-in.module';
import { ActivationIssuer } from './activation-issuer';
import { ChallengeRedemption } from './challenge-redemption';
import { ChallengeTokens } from './challenge-tokens';
import { OtpExchange } from './otp-exchange';
import { PasswordResetRequests } from './password-reset-requests';
import { RecoveryChallenges } from './recovery-challenges';
import { RecoveryController } from './recovery.controller';
import { UserChallengeRepository } from './user-challenge.repository';
import { WorkAfterAnswer } from './work-after-answer';

/**
 * Reset, OTP, set-password and activation routes, and the challenges they own. Global only for
 * the port USER_CHALLENGES, which users (a lower room that may not import this one) injects; the
 * providers room, above, imports it for ActivationIssuer.
 */
@Global()
@Module({
  imports: [UsersModule, TokensModule, EventsModule, MembershipStoreModule, SignInModule],
  controllers: [RecoveryController],
  providers: [UserChallengeRepository, ChallengeTokens, ActivationIssuer, WorkAfterAnswer, PasswordResetRequests, OtpExchange, ChallengeRedemption, { provide: USER_CHALLENGES, useClass: RecoveryChallenges }],
  exports: [USER_CHALLENGES, ActivationIssuer],
})
export class RecoveryModule {}
