import { Module } from '@nestjs/common';
import { TokenCodePoliciesModule } from '../token-code-policies/token-code-policies.module';
import { DevicePageController } from './device-page.controller';
import { TokenCodeRepository } from './token-code.repository';
import { TokenCodesController } from './token-codes.controller';
import { TokenCodesService } from './token-codes.service';

/** The device code flow (RFC 8628): codes, their approval page and API, and the devices' polls. */
@Module({
  imports: [TokenCodePoliciesModule],
  controllers: [TokenCodesController, DevicePageController],
  providers: [TokenCodeRepository, TokenCodesService],
})
export class DeviceCodesModule {}
