import { applyDecorators, Delete, Get, HttpCode, Post, Put, type Type } from '@nestjs/common';
import type { ApiQueryOptions, ApiResponseOptions, SchemaObject } from '@nestjs/swagger';
import { RequirePermission } from '../access-decorators';
import { type BodyExample, BulkDeleteAnswerSchema, queryBodyExamples } from '../api-docs';
import { ApiRoute, type ApiRouteDocs, type RouteBody } from '../api-route';
import { BulkDeleteBodyDto, QueryBodyDto } from '../query/query-body';

/**
 * One decorator per route of the CRUD surface every membership resource repeats
 * (list, _query, search, get, create, replace, delete, bulk delete, actions): each applies the HTTP
 * method and path, the status, the permission and the OpenAPI description the contract asks
 * of that kind of route, so that a controller states only what differs (permission, summary,
 * schemas, examples) and a new resource cannot forget one of them.
 *
 * Each route reads or changes one membership's resource, so the permission is checked
 * against the object in the `:id` path parameter wherever the route has one.
 */
export interface RouteDocs {
  /** "resource.action", e.g. `roles.read` */
  permission: string;
  summary: string;
  description?: string;
  /** The error statuses the route answers beside 401 (which ApiAuth documents on the controller). */
  errors?: number[];
  /**
   * The document's id of the operation, where it is not `<Controller>_<handler>`: a route whose
   * handler has been renamed keeps the id clients were generated with.
   */
  operationId?: string;
}

/**
 * A schema of an answer: a DTO class, which the document names and refers to, or a schema
 * object, shown inline (events: the document has always shown theirs so).
 */
export type RouteSchema = Type<unknown> | SchemaObject;

/** What a list answers: `{items: [schema], count?}`, from the item schema (ApiRoute's `list`). */
export interface ListRouteDocs extends RouteDocs {
  /** The fields `sort` accepts, as the `sort` parameter describes them. */
  sortable: string;
  items: RouteSchema;
}

export interface QueryRouteDocs extends ListRouteDocs {
  /**
   * A `where`/`select` example with this resource's own fields; left out, the document builds
   * one from the `_query` body DTO's property examples (events).
   */
  example?: { where?: object; select?: object };
  /** Whether the `_query` body is required in the document (the route takes no body as `{}`). */
  bodyRequired?: boolean;
}

export interface SearchRouteDocs extends ListRouteDocs {
  /** An example keyword, where the document shows one. */
  keywordExample?: string;
}

export interface ItemRouteDocs extends RouteDocs {
  /** The schema of the answer. */
  answer: RouteSchema;
  /** A description of the answer, where it says more than the schema. */
  answerDescription?: string;
}

export interface WriteRouteDocs extends ItemRouteDocs {
  /**
   * How the document shows the request body: a DTO (where the handler's own body type is not
   * it, e.g. behind a pipe), or a DTO with examples of its own. Left out, the handler's
   * `@Body()` type is the document's body.
   */
  body?: Type<unknown> | { model: Type<unknown>; examples: Record<string, BodyExample> };
}

export interface DeleteRouteDocs extends RouteDocs {
  /** What the 204 says, where the route does more than delete (a token session is revoked). */
  answerDescription?: string;
}

export interface ActionRouteDocs extends ItemRouteDocs {
  /** Below the controller's path, e.g. `:id/secret`. */
  path: string;
  /** The path parameter the permission's object is read from; left out, `id`. */
  object?: string;
}

export interface BulkDeleteRouteDocs extends RouteDocs {
  /** Examples of the `{ids}` body, where the route shows its own. */
  examples?: Record<string, BodyExample>;
}

/**
 * The route's permission and its ApiRoute: the summary, description and operation id it states,
 * its error statuses (the kind's defaults unless it names its own) and what the kind adds.
 */
function documented(docs: RouteDocs, defaultErrors: number[], permissionObject: string | undefined, more: Omit<ApiRouteDocs, 'summary'>): MethodDecorator[] {
  const route: ApiRouteDocs = { summary: docs.summary, errors: docs.errors ?? defaultErrors, ...more };
  if (docs.description !== undefined) route.description = docs.description;
  if (docs.operationId !== undefined) route.operationId = docs.operationId;
  return [RequirePermission(docs.permission, permissionObject === undefined ? {} : { object: permissionObject }), ApiRoute(route)];
}

/** The request body as the document shows it: the DTO named, or a DTO with examples of its own. */
function bodyDocs(body: WriteRouteDocs['body']): Pick<ApiRouteDocs, 'body'> {
  if (body === undefined) return {};
  return { body: typeof body === 'function' ? { model: body } : body };
}

function answerDocs(status: number, docs: ItemRouteDocs): ApiResponseOptions {
  const answer = typeof docs.answer === 'function' ? { status, type: docs.answer } : { status, schema: docs.answer };
  return docs.answerDescription === undefined ? answer : { ...answer, description: docs.answerDescription };
}

/** The `_query` body: the DTO, with an example of this resource's own fields where it gives one. */
function queryBodyDocs(docs: QueryRouteDocs): RouteBody {
  const required = docs.bodyRequired ?? true;
  return docs.example === undefined ? { model: QueryBodyDto, required } : { model: QueryBodyDto, examples: queryBodyExamples(docs.example), required };
}

/** `GET /` : one page of the resource (skip, limit, with_count, sort). */
export function ListRoute(docs: ListRouteDocs): MethodDecorator {
  return applyDecorators(Get(), ...documented(docs, [400, 403, 404], undefined, { list: { items: docs.items, sortable: docs.sortable } }));
}

/** `POST /_query` : a page filtered by `where` and shaped by `select` in the body. */
export function QueryRoute(docs: QueryRouteDocs): MethodDecorator {
  return applyDecorators(
    Post('_query'),
    HttpCode(200),
    ...documented(docs, [400, 403, 404], undefined, { body: queryBodyDocs(docs), list: { items: docs.items, sortable: docs.sortable } }),
  );
}

/** `GET /search?keyword=` : a page of those matching the keyword. Declare it before GetRoute, so that "search" is not taken for an id. */
export function SearchRoute(docs: SearchRouteDocs): MethodDecorator {
  const keyword: ApiQueryOptions = { name: 'keyword', required: true, type: String };
  return applyDecorators(
    Get('search'),
    // The list parameters come first: the document has always listed `keyword` last.
    ...documented(docs, [400, 403, 404], undefined, {
      list: { items: docs.items, sortable: docs.sortable },
      query: [docs.keywordExample === undefined ? keyword : { ...keyword, example: docs.keywordExample }],
    }),
  );
}

/** `GET /:id` */
export function GetRoute(docs: ItemRouteDocs): MethodDecorator {
  return applyDecorators(Get(':id'), ...documented(docs, [403, 404], 'id', { answers: [answerDocs(200, docs)] }));
}

/** `POST /` : 201 with the new resource. */
export function CreateRoute(docs: WriteRouteDocs): MethodDecorator {
  return applyDecorators(Post(), HttpCode(201), ...documented(docs, [400, 403, 404, 409], undefined, { ...bodyDocs(docs.body), answers: [answerDocs(201, docs)] }));
}

/** `PUT /:id` : replaces the resource (409 IdenticalDocumentError when nothing changes). */
export function ReplaceRoute(docs: WriteRouteDocs): MethodDecorator {
  return applyDecorators(Put(':id'), ...documented(docs, [400, 403, 404, 409], 'id', { ...bodyDocs(docs.body), answers: [answerDocs(200, docs)] }));
}

/** `DELETE /:id` : 204. */
export function DeleteRoute(docs: DeleteRouteDocs): MethodDecorator {
  return applyDecorators(Delete(':id'), HttpCode(204), ...documented(docs, [403, 404], 'id', { answers: [{ status: 204, description: docs.answerDescription ?? 'Deleted' }] }));
}

/** `POST /:id/<action>` : 200 with the answer; an action on one object (rotate a secret, freeze a user, test a mail provider). */
export function ActionRoute(docs: ActionRouteDocs): MethodDecorator {
  return applyDecorators(Post(docs.path), HttpCode(200), ...documented(docs, [403, 404], docs.object ?? 'id', { answers: [answerDocs(200, docs)] }));
}

/**
 * `DELETE /` with `{"ids": [...]}` (1..1000): 200 `{deleted, not_found}`. The handler takes the
 * body raw (`@Body() body: unknown`) and hands it to parseBulkIds, which checks its shape and
 * answers the contract's error; the document shows the `{ids}` DTO.
 */
export function BulkDeleteRoute(docs: BulkDeleteRouteDocs): MethodDecorator {
  const body: RouteBody = docs.examples === undefined ? { model: BulkDeleteBodyDto } : { model: BulkDeleteBodyDto, examples: docs.examples };
  return applyDecorators(Delete(), HttpCode(200), ...documented(docs, [400, 403, 404], undefined, { body, answers: [{ status: 200, type: BulkDeleteAnswerSchema }] }));
}
