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

export interface ListingDocs {
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

/** What a controller with ListingRoutes answers with its service. */
export interface Listing {
  /**
   * One page of the collection for the caller. `membershipId` is the path's; the memberships'
   * own listing, which has none, leaves it out of its signature.
   */
  listPage(caller: Caller, request: ListRequest, membershipId: string): Promise<ListPage<Record<string, unknown>>>;
}

// A class that extends a type parameter must take its arguments as `any[]` (the TypeScript mixin pattern).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ListingController = abstract new (...args: any[]) => Listing;

/**
 * A collection's two list routes, written once: `GET /` with the list parameters in the query
 * string and `POST /_query` with `{where, select}` in the body. Both make the same ListRequest
 * and ask the controller's `listPage` for the page; the decorator also gives the controller its
 * tag and authentication (ApiAuth).
 *
 * The routes are those of a subclass, which the decorator returns in place of the controller:
 * Nest and the OpenAPI explorer read a class's own routes before its bases', so the list routes
 * come first in the document (and in Swagger UI), before the controller's own, as they always have.
 */
export function ListingRoutes(docs: ListingDocs) {
  const { permission, sortable, items } = docs;
  const membershipIdParam: ParameterDecorator = docs.membershipScoped === false ? () => undefined : Param('membershipId');

  return <TController extends ListingController>(controller: TController): TController => {
    @ApiTags(docs.tag)
    @ApiAuth()
    abstract class ListingRoutesOf extends controller {
      @ListRoute({ permission, sortable, items, ...docs.list })
      list(@CurrentCaller() caller: Caller, @membershipIdParam membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
        return this.listPage(caller, { query }, membershipId);
      }

      @QueryRoute({ permission, sortable, items, ...docs.query })
      query(
        @CurrentCaller() caller: Caller,
        @membershipIdParam membershipId: string,
        @Query() query: Record<string, unknown>,
        @QueryBodyParam() body: QueryBody,
      ): Promise<ListPage<Record<string, unknown>>> {
        return this.listPage(caller, { query, ...body }, membershipId);
      }
    }
    // The document's operation ids (`<Controller>_<handler>`) and Nest's logs name the controller by its class.
    Object.defineProperty(ListingRoutesOf, 'name', { value: controller.name });
    return ListingRoutesOf;
  };
}
