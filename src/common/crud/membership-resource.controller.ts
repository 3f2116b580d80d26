import { type ArgumentMetadata, Body, Injectable, Param, type PipeTransform, Query, type Type, type ValidationPipe } from '@nestjs/common';
import { CurrentCaller } from '../access-decorators';
import type { BodyExample } from '../api-docs';
import type { Caller } from '../caller';
import { parseBulkIds, type ListPage, type ListRequest } from '../query';
import { BulkDeleteBodyDto } from '../query/query-body';
import { createValidationPipe } from '../validation';
import {
  BulkDeleteRoute,
  type BulkDeleteRouteDocs,
  CreateRoute,
  DeleteRoute,
  GetRoute,
  type ItemRouteDocs,
  type ListRouteDocs,
  type QueryRouteDocs,
  ReplaceRoute,
  type RouteDocs,
  SearchRoute,
  type SearchRouteDocs,
} from './crud-routes';
import { type Listing, ListingRoutes } from './listing-routes';
import type { BulkDeleteAnswer, MembershipResourceOperations, SearchableResourceOperations } from './membership-resource.service';

/**
 * The global validation pipe, for a DTO named here rather than by the parameter's type. A handler
 * written once for many resources has a generic body type, whose design type is Object, and the
 * global pipe lets an Object through unchecked; this pipe checks it against the resource's DTO
 * with the same options, so that the 400 bodies are those of every other route.
 */
@Injectable()
export class DtoBodyPipe implements PipeTransform {
  private readonly pipe: ValidationPipe = createValidationPipe();

  constructor(private readonly dto: Type<object>) {}

  transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    return this.pipe.transform(value, { ...metadata, metatype: this.dto }) as Promise<unknown>;
  }
}

/**
 * A route's documentation, without what the resource states once (permission, schemas, sort
 * fields); the summary, left out, is the one the factory writes from the resource's `names`.
 */
type Described<TDocs extends RouteDocs> = Omit<TDocs, 'permission' | 'sortable' | 'items' | 'answer' | 'body' | 'summary'> & { summary?: string };

export interface MembershipResourceRoutes {
  /** The resource of the permissions (`webhooks` in `webhooks.read`). */
  resource: string;
  /** The OpenAPI tag; left out, `resource`. */
  tag?: string;
  /** How the default summaries name one of the resource and several: `{ one: 'a mail hook', many: 'mail hooks' }`. */
  names: { one: string; many: string };
  /** The schema of one resource in answers and list items. */
  item: Type<unknown>;
  /** The create and replace body, as validated and documented. */
  body: Type<object>;
  /** A pipe that reads the body in place of that validation (user types split theirs); the document still shows `body`. */
  bodyPipe?: Type<PipeTransform>;
  /** The fields `sort` accepts, as the `sort` parameter describes them. */
  sortable: string;
  list?: Described<ListRouteDocs>;
  /** `example`: of the `_query` body, with the resource's own fields. */
  query: Described<QueryRouteDocs>;
  get?: Described<ItemRouteDocs>;
  /** `answer`: where the creation answer is not `item` (it shows a secret once). */
  create?: Described<ItemRouteDocs> & { answer?: Type<unknown> };
  /** `examples`: of the body, where the document shows the replace body's own. */
  replace?: Described<ItemRouteDocs> & { examples?: Record<string, BodyExample> };
  delete?: Described<RouteDocs>;
  deleteMany?: Described<BulkDeleteRouteDocs>;
}

/** The summaries most resources' routes share, written from the resource's names. */
function defaultSummaries({ one, many }: MembershipResourceRoutes['names']) {
  return {
    list: `List ${many}`,
    query: `Query ${many} with where / select`,
    get: `Get ${one}`,
    create: `Create ${one}`,
    replace: `Replace ${one} (same body as create); 409 IdenticalDocumentError when nothing changes`,
    delete: `Delete ${one}`,
    deleteMany: `Delete several ${many}: {"ids": [...]} (1..1000)`,
  };
}

/**
 * The seven routes every membership resource has (list, `_query`, get, create, replace, delete,
 * bulk delete), written once: the class returned is extended by the resource's controller, which
 * adds `@Controller`, its interceptors, a constructor handing its service to `super`, and its own
 * routes (search, secret rotation). Nest and the OpenAPI explorer read the inherited handlers as
 * the subclass's own, the subclass's first: a `search` route declared there is matched before
 * `:id`. List and `_query` are ListingRoutes', read before the others as the document always has.
 *
 * TBody is the body the service takes (the DTO, or what `bodyPipe` makes of the request body).
 */
export function MembershipResourceController<TBody, TResponse, TCreated = TResponse>(routes: MembershipResourceRoutes) {
  const permission = (action: string): string => `${routes.resource}.${action}`;
  const { item } = routes;
  const bodyPipe = routes.bodyPipe ?? new DtoBodyPipe(routes.body);
  const summaries = defaultSummaries(routes.names);
  const { examples: replaceExamples, ...replaceDocs } = routes.replace ?? {};

  @ListingRoutes({
    tag: routes.tag ?? routes.resource,
    permission: permission('read'),
    sortable: routes.sortable,
    items: item,
    list: { summary: summaries.list, ...routes.list },
    query: { summary: summaries.query, ...routes.query },
  })
  abstract class MembershipResourceRoutesBase implements Listing {
    // Public: a class returned from a function cannot declare protected members (TS4094, declaration
    // emit); and ListingRoutes extends the class, which a protected constructor would forbid.
    constructor(readonly service: MembershipResourceOperations<TBody, TResponse, TCreated>) {}

    listPage(caller: Caller, request: ListRequest, membershipId: string): Promise<ListPage<Record<string, unknown>>> {
      return this.service.list(caller, membershipId, request);
    }

    @GetRoute({ permission: permission('read'), answer: item, summary: summaries.get, ...routes.get })
    get(@Param('membershipId') membershipId: string, @Param('id') id: string): Promise<TResponse> {
      return this.service.get(membershipId, id);
    }

    @CreateRoute({ permission: permission('create'), answer: item, body: routes.body, summary: summaries.create, ...routes.create })
    create(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Body(bodyPipe) body: TBody): Promise<TCreated> {
      return this.service.create(caller, membershipId, body);
    }

    @ReplaceRoute({
      permission: permission('update'),
      answer: item,
      body: replaceExamples === undefined ? routes.body : { model: routes.body, examples: replaceExamples },
      summary: summaries.replace,
      ...replaceDocs,
    })
    replace(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string, @Body(bodyPipe) body: TBody): Promise<TResponse> {
      return this.service.replace(caller, membershipId, id, body);
    }

    @DeleteRoute({ permission: permission('delete'), summary: summaries.delete, ...routes.delete })
    delete(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Param('id') id: string): Promise<void> {
      return this.service.delete(caller, membershipId, id);
    }

    /** The global pipe checks the body's keys (only `ids`); parseBulkIds checks the ids and answers the contract's error. */
    @BulkDeleteRoute({ permission: permission('delete'), summary: summaries.deleteMany, ...routes.deleteMany })
    deleteMany(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Body() body: BulkDeleteBodyDto): Promise<BulkDeleteAnswer> {
      return this.service.deleteMany(caller, membershipId, parseBulkIds(body));
    }
  }
  return MembershipResourceRoutesBase;
}

export interface SearchableMembershipResourceRoutes extends MembershipResourceRoutes {
  search: Described<SearchRouteDocs> & { summary: string };
}

/**
 * MembershipResourceController plus `GET /search?keyword=`. Declared on the class between the
 * resource's own and the seven shared ones, the search route is matched before `GET /:id`.
 */
export function SearchableMembershipResourceController<TBody, TResponse, TCreated = TResponse>(routes: SearchableMembershipResourceRoutes) {
  abstract class SearchableMembershipResourceRoutesBase extends MembershipResourceController<TBody, TResponse, TCreated>(routes) {
    protected constructor(override readonly service: SearchableResourceOperations<TBody, TResponse, TCreated>) {
      super(service);
    }

    @SearchRoute({ permission: `${routes.resource}.read`, sortable: routes.sortable, items: routes.item, ...routes.search })
    search(@CurrentCaller() caller: Caller, @Param('membershipId') membershipId: string, @Query() query: Record<string, unknown>): Promise<ListPage<Record<string, unknown>>> {
      const { keyword, ...rest } = query;
      return this.service.search(caller, membershipId, keyword, rest);
    }
  }
  return SearchableMembershipResourceRoutesBase;
}
