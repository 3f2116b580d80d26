import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { UserTypesModule } from '../user-types/user-types.module';
import { CachedSettings } from './cached-settings';
import { EventStreamController } from './event-stream.controller';
import { EventStreamRepository } from './event-stream.repository';
import { EventStreams } from './event-streams';
import { EventWakeups } from './event-wakeups';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';

/**
 * The events API: lists and reads the event log, and its live stream, hiding what the caller's
 * roles keep from lists. Also where an instance hears of the other instances' commits, so the
 * caches of settings they changed (roles, user types, memberships) are dropped here too.
 */
@Module({
  imports: [EventsModule, CallerPermissionsModule, UserTypesModule, MembershipStoreModule],
  // The stream first: its path must not be taken for GET .../events/:id.
  controllers: [EventStreamController, EventsController],
  providers: [EventsService, EventStreamRepository, CachedSettings, EventWakeups, EventStreams],
  exports: [EventStreams, EventWakeups],
})
export class EventLogModule {}
