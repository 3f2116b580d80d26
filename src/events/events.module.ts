import { Module } from '@nestjs/common';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/** The events API; the recorder and repository come from CoreModule (every feature records events). */
@Module({
  controllers: [EventsController],
  providers: [EventsService],
})
export class EventsModule {}
