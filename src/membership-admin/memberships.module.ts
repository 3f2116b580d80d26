import { Module } from '@nestjs/common';
import { ApplicationsModule } from '../applications/applications.module';
import { EventLogModule } from '../event-log/event-log.module';
import { EventsModule } from '../events/events.module';
import { OutboundModule } from '../outbound/outbound.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { PasswordHasherModule } from '../users/password-hasher.module';
import { UsersModule } from '../users/users.module';
import { MembershipProvisioner } from './membership-provisioner';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { MembershipsController } from './memberships.controller';
import { MembershipsService } from './memberships.service';

@Module({
  imports: [MembershipStoreModule, OutboundModule, EventsModule, EventLogModule, CallerPermissionsModule, UsersModule, ApplicationsModule, PasswordHasherModule],
  controllers: [MembershipsController],
  providers: [MembershipProvisioner, MembershipsService],
  exports: [MembershipStoreModule, MembershipProvisioner],
})
export class MembershipsModule {}
