import { Module } from '@nestjs/common';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { EventRecorder } from './event-recorder';
import { EventRepository } from './event.repository';
import { EventStreamController } from './event-stream.controller';
import { EventStreamRepository } from './event-stream.repository';
import { EventStreams } from './event-streams';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** The event log: the recorder every feature writes through, its repository, the events API and its live stream. */
@Module({
  imports: [CallerPermissionsModule],
  // The stream first: its path must not be taken for GET .../events/:id.
  controllers: [EventStreamController, EventsController],
  providers: [EventRepository, EventRecorder, EventsService, EventStreamRepository, EventStreams],
  exports: [EventRepository, EventRecorder, EventStreams],
})
export class EventsModule {}
