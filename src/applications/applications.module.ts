import { Global, Module } from '@nestjs/common';
import { ApplicationRepository } from './application.repository';
import { ApplicationsController } from './applications.controller';
import { ApplicationsService } from './applications.service';

@Global()
@Module({
  controllers: [ApplicationsController],
  providers: [ApplicationRepository, ApplicationsService],
  exports: [ApplicationRepository],
})
export class ApplicationsModule {}
