import { Global, Module } from '@nestjs/common';
import { ApplicationRepository } from './application.repository';

@Global()
@Module({
  providers: [ApplicationRepository],
  exports: [ApplicationRepository],
})
export class ApplicationsModule {}
