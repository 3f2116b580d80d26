import { Controller, Delete, Get, HttpCode, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiPropertyOptional, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../common/caller';
import { CurrentCaller, RequirePermission } from '../common/access-decorators';
import { ApiAuth, ApiErrors } from '../common/openapi';
import type { ListPage } from '../common/query';
import { ListRoute, QueryRoute } from '../common/crud/crud-routes';
import { type QueryBody, QueryBodyParam } from '../common/query/query-body';
import type { TokenSessionResponse } from './token-listing.mapper';
import { TOKEN_LISTING_SORTABLE_FIELDS } from './token-listing.schema';
import { TokenListingService } from './token-listing.service';

export class TokenSessionSchema {
  @ApiProperty({ description: 'Session id (the `sid` of its tokens)' }) _id!: string;
  @ApiProperty() user_id!: string;
  @ApiProperty({ nullable: true, type: String }) username!: string | null;
  @ApiProperty({ enum: ['pair', 'scoped'], description: 'pair: access + refresh token; scoped: a scoped access token' }) kind!: string;
  @ApiProperty({ nullable: true, type: String, description: 'For a scoped token: the session it was derived from' }) parent_id!: string | null;
  @ApiProperty({ nullable: true, type: [String] }) scopes!: string[] | null;
  @ApiProperty() created_at!: string;
  @ApiProperty({ description: 'When the whole session dies (the later of the two expiries)' }) expires_at!: string;
  @ApiProperty() access_expires_at!: string;
  @ApiProperty({ nullable: true, type: String }) refresh_expires_at!: string | null;
  @ApiProperty({ nullable: true, type: String }) ip_address!: string | null;
  @ApiProperty({ nullable: true, type: String }) user_agent!: string | null;
  @ApiProperty() membership_id!: string;
  @ApiPropertyOptional({ description: 'Revoked listing only' }) revoked_at?: string;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'Revoked listing only: who revoked it' }) revoked_by?: string | null;
  @ApiPropertyOptional({ nullable: true, type: String, description: 'Revoked listing only: revoked, logout-all, refreshed, password-changed, ...' })
  revoke_reason?: string | null;
}

/** What the active and the revoked listings share: one permission, sort fields and item schema. */
const LISTING = { permission: 'tokens.read', sortable: TOKEN_LISTING_SORTABLE_FIELDS, items: TokenSessionSchema };
const ACTIVE = { ...LISTING, path: 'active-tokens' };
const REVOKED = { ...LISTING, path: 'revoked-tokens' };
const TOKEN_QUERY_EXAMPLE = { where: { username: 'ada' }, select: { username: 1, created_at: 1, expires_at: 1 } };

/** Active and revoked token sessions of a membership (metadata only; token strings are never stored). */
@ApiTags('tokens')
@ApiAuth()
@Controller('memberships/:membershipId')
export class TokenListingController {
  constructor(private readonly listings: TokenListingService) {}

  @ListRoute({ ...ACTIVE, summary: 'List live token sessions (not revoked, not expired), newest first' })
  listActive(@Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.listings.list(membershipId, 'active', { query });
  }

  @QueryRoute({ ...ACTIVE, summary: 'Query live token sessions with where/select', example: TOKEN_QUERY_EXAMPLE })
  queryActive(
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.listings.list(membershipId, 'active', { query, ...body });
  }

  @Get('active-tokens/:id')
  @RequirePermission('tokens.read', { object: 'id' })
  @ApiOperation({ summary: 'Get one live token session' })
  @ApiResponse({ status: 200, type: TokenSessionSchema })
  @ApiErrors(403, 404)
  getActive(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<TokenSessionResponse> {
    return this.listings.getActive(membershipId, id);
  }

  @Delete('active-tokens/:id')
  @HttpCode(204)
  @RequirePermission('tokens.delete', { object: 'id' })
  @ApiOperation({
    summary: 'Revoke a token session; records TokenRevoked',
    description:
      "A pair's record ends its whole sign-in session: every pair refreshed in it and every scoped token made from it. " +
      "A scoped token's record ends that token only.",
  })
  @ApiResponse({ status: 204, description: 'Revoked' })
  @ApiErrors(403, 404)
  revoke(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string): Promise<void> {
    return this.listings.revoke(caller, membershipId, id);
  }

  @ListRoute({ ...REVOKED, summary: 'List revoked token sessions not yet swept (they are deleted a few minutes after expiry), newest first' })
  listRevoked(@Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
    return this.listings.list(membershipId, 'revoked', { query });
  }

  @QueryRoute({ ...REVOKED, summary: 'Query revoked token sessions with where/select', example: TOKEN_QUERY_EXAMPLE })
  queryRevoked(
    @Param('membershipId') membershipId: string,
    @Query() query: Record<string, unknown>,
    @QueryBodyParam() body: QueryBody,
  ): Promise<ListPage<Record<string, unknown>>> {
    return this.listings.list(membershipId, 'revoked', { query, ...body });
  }
}
