import { Controller, Param } from '@nestjs/common';
import type { Caller } from '../common/caller';
import { CurrentCaller } from '../common/access-decorators';
import type { ListPage, ListRequest } from '../common/query';
import { DeleteRoute, GetRoute } from '../common/crud/crud-routes';
import { type Listing, ListingRoutes } from '../common/crud/listing-routes';
import type { TokenSessionResponse } from './token-listing.mapper';
import { TOKEN_LISTING_SORTABLE_FIELDS } from '../sessions/token-listing.schema';
import { TokenListingService } from './token-listing.service';
import { TokenSessionSchema } from './token.dto';

/** What the active and the revoked listings share: the tag, one permission, sort fields and item schema. */
const TOKEN_SESSIONS = { tag: 'tokens', permission: 'tokens.read', sortable: TOKEN_LISTING_SORTABLE_FIELDS, items: TokenSessionSchema };
const TOKEN_QUERY_EXAMPLE = { where: { username: 'ada' }, select: { username: 1, created_at: 1, expires_at: 1 } };

// The token sessions of a membership (metadata only; token strings are never stored), active and
// revoked, each listed at a path of its own. Operation ids from when one TokenListingController
// served both listings, kept for generated clients.

@Controller('memberships/:membershipId/active-tokens')
@ListingRoutes({
  ...TOKEN_SESSIONS,
  list: { summary: 'List live token sessions (not revoked, not expired), newest first', operationId: 'TokenListing_listActive' },
  query: { summary: 'Query live token sessions with where/select', example: TOKEN_QUERY_EXAMPLE, operationId: 'TokenListing_queryActive' },
})
export class ActiveTokensController implements Listing {
  constructor(private readonly listings: TokenListingService) {}

  listPage(caller: Caller, request: ListRequest, membershipId: string): Promise<ListPage<Record<string, unknown>>> {
    return this.listings.list(caller, membershipId, 'active', request);
  }

  @GetRoute({ permission: 'tokens.read', summary: 'Get one live token session', answer: TokenSessionSchema, operationId: 'TokenListing_getActive' })
  getActive(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<TokenSessionResponse> {
    return this.listings.getActive(membershipId, id);
  }

  @DeleteRoute({
    permission: 'tokens.delete',
    summary: 'Revoke a token session; records TokenRevoked',
    description:
      "A pair's record ends its whole sign-in session: every pair refreshed in it and every scoped token made from it. " +
      "A scoped token's record ends that token only.",
    answerDescription: 'Revoked',
    operationId: 'TokenListing_revoke',
  })
  revoke(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string): Promise<void> {
    return this.listings.revoke(caller, membershipId, id);
  }
}

@Controller('memberships/:membershipId/revoked-tokens')
@ListingRoutes({
  ...TOKEN_SESSIONS,
  list: {
    summary: 'List revoked token sessions not yet swept (they are deleted a few minutes after expiry), newest first',
    operationId: 'TokenListing_listRevoked',
  },
  query: { summary: 'Query revoked token sessions with where/select', example: TOKEN_QUERY_EXAMPLE, operationId: 'TokenListing_queryRevoked' },
})
export class RevokedTokensController implements Listing {
  constructor(private readonly listings: TokenListingService) {}

  listPage(caller: Caller, request: ListRequest, membershipId: string): Promise<ListPage<Record<string, unknown>>> {
    return this.listings.list(caller, membershipId, 'revoked', request);
  }
}
