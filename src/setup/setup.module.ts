import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipsModule } from '../membership-admin/memberships.module';
import { SetupController, SetupTokenGuard } from './setup.controller';
import { SetupService } from './setup.service';

@Module({
  imports: [MembershipsModule, EventsModule],
  controllers: [SetupController],
  providers: [SetupService, SetupTokenGuard],
  exports: [SetupService],
})
export class SetupModule {}
