import { Body, Controller, Param, Query, UseInterceptors } from '@nestjs/common';
import { ApiParam, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller } from '../common/access-decorators';
import { ApiAuth } from '../common/openapi';
import type { ListPage } from '../common/query';
import { BulkDeleteRoute, CreateRoute, DeleteRoute, GetRoute, ListRoute, QueryRoute, ReplaceRoute } from '../common/crud/crud-routes';
import { type QueryBody, QueryBodyParam } from '../common/query/query-body';
import { TokenCodePolicyBodyDto, TokenCodePolicyResponseDto } from './token-code-policy.dto';
import type { TokenCodePolicyResponse } from './token-code-policy.mapper';
import { TokenCodePoliciesService } from './token-code-policies.service';
import { EventRecordingInterceptor } from '../events/event-recording.interceptor';

const POLICY_SORT = 'slug or sys.created_at, optionally followed by asc or desc; default creation order';

@ApiTags('token code policies')
@ApiAuth()
@ApiParam({ name: 'membershipId' })
@Controller('memberships/:membershipId/token-code-policies')
@UseInterceptors(EventRecordingInterceptor)
export class TokenCodePoliciesController {
  constructor(private readonly policies: TokenCodePoliciesService) {}

  @ListRoute({ permission: 'token-code-policies.read', summary: 'List token code policies', sortable: POLICY_SORT, items: TokenCodePolicyResponseDto })
  list(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.policies.list(caller, membershipId, query);
  }

  @QueryRoute({
    permission: 'token-code-policies.read',
    summary: 'Query token code policies with where / select',
    sortable: POLICY_SORT,
    items: TokenCodePolicyResponseDto,
    example: { where: { contains_letters: false }, select: { name: 1, length: 1 } },
    bodyRequired: false,
  })
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.policies.list(caller, membershipId, query, body);
  }

  @GetRoute({ permission: 'token-code-policies.read', summary: 'Get a token code policy', answer: TokenCodePolicyResponseDto })
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<TokenCodePolicyResponse> {
    return this.policies.get(membershipId, id);
  }

  @CreateRoute({ permission: 'token-code-policies.create', summary: 'Create a token code policy', answer: TokenCodePolicyResponseDto })
  create(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: TokenCodePolicyBodyDto): Promise<TokenCodePolicyResponse> {
    return this.policies.create(membershipId, caller, body);
  }

  @ReplaceRoute({
    permission: 'token-code-policies.update',
    summary: 'Replace a token code policy (same body as create); 409 IdenticalDocumentError when nothing changes',
    answer: TokenCodePolicyResponseDto,
  })
  replace(
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @CurrentCaller() caller: Caller,
    @Body() body: TokenCodePolicyBodyDto,
  ): Promise<TokenCodePolicyResponse> {
    return this.policies.replace(membershipId, id, caller, body);
  }

  @DeleteRoute({
    permission: 'token-code-policies.delete',
    summary: "Delete a token code policy; the membership's code_policy answers 409 TokenCodePolicyInUse",
    errors: [403, 404, 409],
  })
  delete(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    return this.policies.delete(membershipId, id, caller);
  }

  @BulkDeleteRoute({
    permission: 'token-code-policies.delete',
    summary: 'Delete several token code policies: {"ids": [...]} (1..1000); the membership\'s code_policy among them refuses the request',
    examples: { ids: { summary: 'Policy ids', value: { ids: ['3f0c8a2e-5b1d-4c7e-9f1a-2b3c4d5e6f70'] } } },
    errors: [400, 403, 404, 409],
  })
  deleteMany(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: unknown): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.policies.deleteMany(membershipId, caller, body);
  }
}
