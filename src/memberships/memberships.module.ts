import { Global, Module } from '@nestjs/common';
import { MembershipCache } from './membership-cache';
import { MembershipProvisioner } from './membership-provisioner';
import { MembershipRepository } from './membership.repository';

@Global()
@Module({
  providers: [MembershipRepository, MembershipCache, MembershipProvisioner],
  exports: [MembershipRepository, MembershipCache, MembershipProvisioner],
})
export class MembershipsModule {}
