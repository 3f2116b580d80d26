import { Module } from '@nestjs/common';
import { TokenCodeRepository } from './token-code.repository';
import { TokenCodesController } from './token-codes.controller';
import { TokenCodesService } from './token-codes.service';

/** The device code flow (RFC 8628): codes, their approval and the devices' polls. */
@Module({
  controllers: [TokenCodesController],
  providers: [TokenCodeRepository, TokenCodesService],
})
export class DeviceCodesModule {}
