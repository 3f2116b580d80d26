import { Module } from '@nestjs/common';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { EventRecorder } from './event-recorder';
import { EventRepository } from './event.repository';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** The event log: the recorder every feature writes through, its repository, and the events API. */
@Module({
  imports: [CallerPermissionsModule],
  controllers: [EventsController],
  providers: [EventRepository, EventRecorder, EventsService],
  exports: [EventRepository, EventRecorder],
})
export class EventsModule {}
