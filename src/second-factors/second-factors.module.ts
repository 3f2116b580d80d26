import { Global, Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { SECOND_STEP_GATE } from '../tokens/second-step';
import { TokensModule } from '../tokens/tokens.module';
import { PasswordHasherModule } from '../users/password-hasher.module';
import { UsersModule } from '../users/users.module';
import { CodeFactor } from './code-factor';
import { MfaController } from './mfa.controller';
import { MfaGate } from './mfa-gate';
import { MfaSignInRepository } from './mfa-sign-in.repository';
import { MfaRepository } from './mfa.repository';
import { MfaService } from './mfa.service';
import { Passkeys } from './passkeys';
import { SecondStepController } from './second-step.controller';
import { SecondStepService } from './second-step.service';
import { SignInModule } from '../sign-in/sign-in.module';

/**
 * Authenticating a person beyond the password: second factors and the second step of sign-in.
 * Global, because tokens/ (below this room) asks SECOND_STEP_GATE after every first step and may
 * not import this module. The sign-in defenses (SIGN_IN_ATTEMPTS) come from sign-in/, below.
 */
@Global()
@Module({
  imports: [TokensModule, UsersModule, MembershipStoreModule, CallerPermissionsModule, EventsModule, PasswordHasherModule, SignInModule],
  controllers: [MfaController, SecondStepController],
  providers: [
    MfaRepository,
    MfaSignInRepository,
    Passkeys,
    MfaService,
    MfaGate,
    SecondStepService,
    CodeFactor,
    { provide: SECOND_STEP_GATE, useExisting: MfaGate },
  ],
  exports: [SECOND_STEP_GATE, CodeFactor],
})
export class SecondFactorsModule {}
