import { Param, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { CurrentCaller } from '../access-decorators';
import type { Caller } from '../caller';
import { ApiAuth } from '../openapi';
import type { ListPage, ListRequest } from '../query';
import { type QueryBody, QueryBodyParam } from '../query/query-body';
import { ListRoute, type ListRouteDocs, QueryRoute, type QueryRouteDocs, type RouteSchema } from './crud-routes';

/** A listing route's documentation, without what the listing states once. */
type ListingRouteDocs<TDocs extends ListRouteDocs> = Omit<TDocs, 'permission' | 'sortable' | 'items'>;

export interface ListingRoutes {
  /** The OpenAPI tag of the controller. */
  tag: string;
  /** What both routes require, e.g. `events.read`. */
  permission: string;
  /** The fields `sort` accepts, as the `sort` parameter describes them. */
  sortable: string;
  /** The schema of one listed item. */
  items: RouteSchema;
  list: ListingRouteDocs<ListRouteDocs>;
  query: ListingRouteDocs<QueryRouteDocs>;
  /**
   * False for the memberships' own listing, which stands outside `/memberships/:membershipId`;
   * left out, the routes read that path parameter and hand it to `listPage`.
   */
  membershipScoped?: boolean;
}

/**
 * A collection's two list routes, written once: `GET /` with the list parameters in the query
 * string and `POST /_query` with `{where, select}` in the body. Both make the same ListRequest
 * and ask the controller's `listPage` for the page, so that a controller extending the class
 * returned states only its documentation and which service answers.
 *
 * The class also carries the controller's tag and authentication (ApiAuth).
 */
export function ListingController(routes: ListingRoutes) {
  const { permission, sortable, items } = routes;
  const membershipIdParam: ParameterDecorator = routes.membershipScoped === false ? () => undefined : Param('membershipId');

  @ApiTags(routes.tag)
  @ApiAuth()
  abstract class ListingRoutesBase {
    /**
     * One page of the collection for the caller. `membershipId` is the path's; the memberships'
     * own listing, which has none, leaves it out of its signature.
     */
    // Public: a class returned from a function cannot declare protected members (TS4094, declaration emit).
    abstract listPage(caller: Caller, request: ListRequest, membershipId: string): Promise<ListPage<Record<string, unknown>>>;

    @ListRoute({ permission, sortable, items, ...routes.list })
    list(@CurrentCaller() caller: Caller, @membershipIdParam membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
      return this.listPage(caller, { query }, membershipId);
    }

    @QueryRoute({ permission, sortable, items, ...routes.query })
    query(
      @CurrentCaller() caller: Caller,
      @membershipIdParam membershipId: string,
      @Query() query: Record<string, unknown>,
      @QueryBodyParam() body: QueryBody,
    ): Promise<ListPage<Record<string, unknown>>> {
      return this.listPage(caller, { query, ...body }, membershipId);
    }
  }
  return ListingRoutesBase;
}
