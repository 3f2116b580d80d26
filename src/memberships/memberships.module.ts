import { Global, Module } from '@nestjs/common';
import { OutboundModule } from '../outbound/outbound.module';
import { MembershipCache } from './membership-cache';
import { MembershipProvisioner } from './membership-provisioner';
import { MembershipRepository } from './membership.repository';
import { MembershipsController } from './memberships.controller';
import { MembershipsService } from './memberships.service';

@Global()
@Module({
  imports: [OutboundModule],
  controllers: [MembershipsController],
  providers: [MembershipRepository, MembershipCache, MembershipProvisioner, MembershipsService],
  exports: [MembershipRepository, MembershipCache, MembershipProvisioner],
})
export class MembershipsModule {}
