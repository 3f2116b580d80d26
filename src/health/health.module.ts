import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SetupModule } from '../setup/setup.module';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule, SetupModule],
  controllers: [HealthController],
})
export class HealthModule {}
