import { Module } from '@nestjs/common';
import { RecoveryController } from './recovery.controller';
import { RecoveryService } from './recovery.service';

/** Reset, OTP, set-password and activation routes; the challenge store and tokens come from UsersModule. */
@Module({
  controllers: [RecoveryController],
  providers: [RecoveryService],
})
export class RecoveryModule {}
