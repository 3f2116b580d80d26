import { Module } from '@nestjs/common';
import { MembershipCache } from './membership-cache';
import { MembershipRepository } from './membership.repository';

/**
 * The membership records and their cache. Apart from MembershipsModule because users, mail, device
 * codes and the access guard read memberships, while MembershipsModule provisions users and applications.
 */
@Module({
  providers: [MembershipRepository, MembershipCache],
  exports: [MembershipRepository, MembershipCache],
})
export class MembershipStoreModule {}
