import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** The events API: lists and reads the event log, hiding what the caller's roles keep from lists. */
@Module({
  imports: [EventsModule, CallerPermissionsModule],
  controllers: [EventsController],
  providers: [EventsService],
})
export class EventLogModule {}
