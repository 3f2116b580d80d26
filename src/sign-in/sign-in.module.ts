import { Global, Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { SECOND_STEP_GATE } from '../tokens/second-step';
import { TokensModule } from '../tokens/tokens.module';
import { PasswordHasherModule } from '../users/password-hasher.module';
import { UsersModule } from '../users/users.module';
import { MfaController } from './mfa/mfa.controller';
import { MfaGate } from './mfa/mfa-gate';
import { MfaSignInRepository } from './mfa/mfa-sign-in.repository';
import { MfaRepository } from './mfa/mfa.repository';
import { MfaService } from './mfa/mfa.service';
import { Passkeys } from './mfa/passkeys';
import { SecondStepController } from './mfa/second-step.controller';
import { SecondStepService } from './mfa/second-step.service';
import { SIGN_IN_ATTEMPTS } from './sign-in-attempts';
import { AllowEverySignInAttempt } from './sign-in-attempts.placeholder';

/**
 * Authenticating a person beyond the password: second factors and the second step of sign-in.
 * Global, because tokens/ (below this room) asks SECOND_STEP_GATE after every first step and may
 * not import this module; likewise SIGN_IN_ATTEMPTS, which every secret-checking step asks.
 */
@Global()
@Module({
  imports: [TokensModule, UsersModule, MembershipStoreModule, EventsModule, PasswordHasherModule],
  controllers: [MfaController, SecondStepController],
  providers: [
    MfaRepository,
    MfaSignInRepository,
    Passkeys,
    MfaService,
    MfaGate,
    SecondStepService,
    { provide: SECOND_STEP_GATE, useExisting: MfaGate },
    { provide: SIGN_IN_ATTEMPTS, useClass: AllowEverySignInAttempt },
  ],
  exports: [SECOND_STEP_GATE, SIGN_IN_ATTEMPTS],
})
export class SignInModule {}
