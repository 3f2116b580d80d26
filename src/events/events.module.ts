import { Module } from '@nestjs/common';
import { EventRecorder } from './event-recorder';
import { EventRepository } from './event.repository';

/**
 * The recorder every feature writes its events through, and its repository. The events API
 * (GET /events) lives in event-log/, above roles: it filters by the caller's permissions, which
 * roles compute, while roles record their own changes here.
 */
@Module({
  providers: [EventRepository, EventRecorder],
  exports: [EventRepository, EventRecorder],
})
export class EventsModule {}
