import { Controller, UseInterceptors } from '@nestjs/common';
import { MembershipResourceController } from '../common/crud/membership-resource.controller';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';
import { TokenCodePolicyBodyDto, TokenCodePolicyResponseDto } from './token-code-policy.dto';
import type { TokenCodePolicyResponse } from './token-code-policy.mapper';
import { TokenCodePoliciesService } from './token-code-policies.service';

@Controller('memberships/:membershipId/token-code-policies')
@UseInterceptors(EventRecordingInterceptor)
export class TokenCodePoliciesController extends MembershipResourceController<TokenCodePolicyBodyDto, TokenCodePolicyResponse>({
  resource: 'token-code-policies',
  tag: 'token code policies',
  names: { one: 'a token code policy', many: 'token code policies' },
  item: TokenCodePolicyResponseDto,
  body: TokenCodePolicyBodyDto,
  sortable: 'slug or sys.created_at, optionally followed by asc or desc; default creation order',
  query: { example: { where: { contains_letters: false }, select: { name: 1, length: 1 } }, bodyRequired: false },
  delete: { summary: "Delete a token code policy; the membership's code_policy answers 409 TokenCodePolicyInUse", errors: [403, 404, 409] },
  deleteMany: {
    summary: 'Delete several token code policies: {"ids": [...]} (1..1000); the membership\'s code_policy among them refuses the request',
    examples: { ids: { summary: 'Policy ids', value: { ids: ['3f0c8a2e-5b1d-4c7e-9f1a-2b3c4d5e6f70'] } } },
    errors: [400, 403, 404, 409],
  },
}) {
  constructor(policies: TokenCodePoliciesService) {
    super(policies);
  }
}
