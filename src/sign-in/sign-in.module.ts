import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { SIGN_IN_ATTEMPTS } from './sign-in-attempts';
import { SignInCounterRepository } from './sign-in-counter.repository';
import { SignInDefenses } from './sign-in-defenses';
import { SignInController } from './sign-in.controller';
import { SignInService } from './sign-in.service';

/** The sign-in defenses: SIGN_IN_ATTEMPTS for every step that checks a typed secret, and the unlock route. */
@Module({
  imports: [EventsModule],
  controllers: [SignInController],
  providers: [SignInCounterRepository, SignInDefenses, SignInService, { provide: SIGN_IN_ATTEMPTS, useExisting: SignInDefenses }],
  exports: [SIGN_IN_ATTEMPTS, SignInDefenses],
})
export class SignInModule {}
