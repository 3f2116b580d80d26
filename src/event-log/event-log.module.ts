import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { EventStreamController } from './event-stream.controller';
import { EventStreamRepository } from './event-stream.repository';
import { EventStreams } from './event-streams';
import { EventWakeups } from './event-wakeups';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** The events API: lists and reads the event log, and its live stream, hiding what the caller's roles keep from lists. */
@Module({
  imports: [EventsModule, CallerPermissionsModule],
  // The stream first: its path must not be taken for GET .../events/:id.
  controllers: [EventStreamController, EventsController],
  providers: [EventsService, EventStreamRepository, EventWakeups, EventStreams],
  exports: [EventStreams],
})
export class EventLogModule {}
