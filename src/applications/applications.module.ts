import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { ApplicationCredentials } from './application-credentials';
import { ApplicationRepository } from './application.repository';
import { ApplicationsController } from './applications.controller';
import { ApplicationsService } from './applications.service';

@Module({
  imports: [CallerPermissionsModule, EventsModule],
  controllers: [ApplicationsController],
  providers: [ApplicationRepository, ApplicationsService, ApplicationCredentials],
  exports: [ApplicationRepository, ApplicationCredentials],
})
export class ApplicationsModule {}
