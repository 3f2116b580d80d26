import { Global, Module } from '@nestjs/common';
import { MembershipCache } from './membership-cache';
import { MembershipProvisioner } from './membership-provisioner';
import { MembershipRepository } from './membership.repository';
import { MembershipsController } from './memberships.controller';
import { MembershipsService } from './memberships.service';

@Global()
@Module({
  controllers: [MembershipsController],
  providers: [MembershipRepository, MembershipCache, MembershipProvisioner, MembershipsService],
  exports: [MembershipRepository, MembershipCache, MembershipProvisioner],
})
export class MembershipsModule {}
