import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, UseInterceptors } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import type { ListPage } from '../common/query';
import { ApiJsonBody, ApiListParams, ApiQueryBody, BulkDeleteAnswerSchema } from '../common/api-docs';
import { BulkDeleteBodyDto, type QueryBody, QueryBodyParam } from '../common/query/query-body';
import { TokenCodePolicyBodyDto, TokenCodePolicyPageDto, TokenCodePolicyResponseDto } from './token-code-policy.dto';
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

  @Get()
  @RequirePermission('token-code-policies.read')
  @ApiOperation({ summary: 'List token code policies' })
  @ApiListParams(POLICY_SORT)
  @ApiResponse({ status: 200, type: TokenCodePolicyPageDto })
  @ApiErrors(400, 403, 404)
  list(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.policies.list(caller, membershipId, query);
  }

  @Post('_query')
  @HttpCode(200)
  @RequirePermission('token-code-policies.read')
  @ApiOperation({ summary: 'Query token code policies with where / select' })
  @ApiListParams(POLICY_SORT)
  @ApiQueryBody({ where: { contains_letters: false }, select: { name: 1, length: 1 } }, false)
  @ApiResponse({ status: 200, type: TokenCodePolicyPageDto })
  @ApiErrors(400, 403, 404)
  query(
    @CurrentCaller() caller: Caller,
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.policies.list(caller, membershipId, query, body);
  }

  @Get(':id')
  @RequirePermission('token-code-policies.read', { object: 'id' })
  @ApiOperation({ summary: 'Get a token code policy' })
  @ApiResponse({ status: 200, type: TokenCodePolicyResponseDto })
  @ApiErrors(403, 404)
  get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<TokenCodePolicyResponse> {
    return this.policies.get(membershipId, id);
  }

  @Post()
  @HttpCode(201)
  @RequirePermission('token-code-policies.create')
  @ApiOperation({ summary: 'Create a token code policy' })
  @ApiResponse({ status: 201, type: TokenCodePolicyResponseDto })
  @ApiErrors(400, 403, 404, 409)
  create(@Param('membershipId') membershipId: string, @CurrentCaller() caller: Caller, @Body() body: TokenCodePolicyBodyDto): Promise<TokenCodePolicyResponse> {
    return this.policies.create(membershipId, caller, body);
  }

  @Put(':id')
  @RequirePermission('token-code-policies.update', { object: 'id' })
  @ApiOperation({ summary: 'Replace a token code policy (same body as create); 409 IdenticalDocumentError when nothing changes' })
  @ApiResponse({ status: 200, type: TokenCodePolicyResponseDto })
  @ApiErrors(400, 403, 404, 409)
  replace(
    @Param('membershipId') membershipId: string,
    @Param('id') id: string,
    @CurrentCaller() caller: Caller,
    @Body() body: TokenCodePolicyBodyDto,
  ): Promise<TokenCodePolicyResponse> {
    return this.policies.replace(membershipId, id, caller, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('token-code-policies.delete', { object: 'id' })
  @ApiOperation({ summary: "Delete a token code policy; the membership's code_policy answers 409 TokenCodePolicyInUse" })
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiErrors(403, 404, 409)
  delete(@Param('membershipId') membershipId: string, @Param('id') id: string, @CurrentCaller() caller: Caller): Promise<void> {
    return this.policies.delete(membershipId, id, caller);
  }

  @Delete()
  @HttpCode(200)
  @RequirePermission('token-code-policies.delete')
  @ApiOperation({ summary: 'Delete several token code policies: {"ids": [...]} (1..1000); the membership\'s code_policy among them refuses the request' })
  @ApiJsonBody(BulkDeleteBodyDto, { ids: { summary: 'Policy ids', value: { ids: ['3f0c8a2e-5b1d-4c7e-9f1a-2b3c4d5e6f70'] } } })
  @ApiResponse({ status: 200, type: BulkDeleteAnswerSchema })
  @ApiErrors(400, 403, 404, 409)
  deleteMany(
    @Param('membershipId') membershipId: string,
    @CurrentCaller() caller: Caller,
    // Raw: parseBulkIds checks the shape and answers the contract's error.
    @Body() body: unknown,
  ): Promise<{ deleted: string[]; not_found: string[] }> {
    return this.policies.deleteMany(membershipId, caller, body);
  }
}
