import { Module } from '@nestjs/common';
import { DevicePageController } from './device-page.controller';
import { TokenCodeRepository } from './token-code.repository';
import { TokenCodesController } from './token-codes.controller';
import { TokenCodesService } from './token-codes.service';

/** The device code flow (RFC 8628): codes, their approval page and API, and the devices' polls. */
@Module({
  controllers: [TokenCodesController, DevicePageController],
  providers: [TokenCodeRepository, TokenCodesService],
})
export class DeviceCodesModule {}
