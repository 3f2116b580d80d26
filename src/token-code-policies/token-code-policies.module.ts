import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { TokenCodePoliciesController } from './token-code-policies.controller';
import { TokenCodePoliciesService } from './token-code-policies.service';
import { TokenCodePolicyRepository } from './token-code-policy.repository';

/** How a membership's device codes look and live: CRUD, `_query`, bulk delete, with events. */
@Module({
  imports: [EventsModule, CallerPermissionsModule],
  controllers: [TokenCodePoliciesController],
  providers: [TokenCodePolicyRepository, TokenCodePoliciesService],
  exports: [TokenCodePolicyRepository],
})
export class TokenCodePoliciesModule {}
