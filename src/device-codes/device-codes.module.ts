import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { SignInModule } from '../sign-in/sign-in.module';
import { TokensModule } from '../tokens/tokens.module';
import { TokenCodePoliciesModule } from '../token-code-policies/token-code-policies.module';
import { DevicePageController } from './device-page.controller';
import { TokenCodeRepository } from './token-code.repository';
import { TokenCodesController } from './token-codes.controller';
import { TokenCodesService } from './token-codes.service';

/** The device code flow (RFC 8628): codes, their approval page and API, and the devices' polls. */
@Module({
  imports: [TokenCodePoliciesModule, TokensModule, MembershipStoreModule, EventsModule, SignInModule],
  controllers: [TokenCodesController, DevicePageController],
  providers: [TokenCodeRepository, TokenCodesService],
  // The OpenID Provider's RFC 8628 endpoints make and redeem the same codes.
  exports: [TokenCodesService],
})
export class DeviceCodesModule {}
