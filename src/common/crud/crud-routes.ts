import { applyDecorators, Delete, Get, HttpCode, Post, Put, type Type } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery, ApiResponse } from '@nestjs/swagger';
import { RequirePermission } from '../access-decorators';
import { ApiJsonBody, ApiListParams, ApiListResponse, ApiQueryBody, type BodyExample, BulkDeleteAnswerSchema } from '../api-docs';
import { ApiErrors } from '../openapi';
import { BulkDeleteBodyDto } from '../query/query-body';

/**
 * One decorator per route of the CRUD surface every membership resource repeats
 * (list, _query, search, get, create, replace, delete, bulk delete): each applies the HTTP
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

/** What a list answers: `{items: [schema], count?}`, from the item schema (see ApiListResponse). */
export interface ListRouteDocs extends RouteDocs {
  /** The fields `sort` accepts, as the `sort` parameter describes them. */
  sortable: string;
  items: Type<unknown>;
  /**
   * The collection's path below the controller's, for a controller that lists more than one
   * collection (active and revoked tokens); left out, the controller's own path.
   */
  path?: string;
}

export interface QueryRouteDocs extends ListRouteDocs {
  /** A `where`/`select` example with this resource's own fields. */
  example: { where?: object; select?: object };
  /** Whether the `_query` body is required in the document (the route takes no body as `{}`). */
  bodyRequired?: boolean;
}

export interface SearchRouteDocs extends ListRouteDocs {
  /** An example keyword, where the document shows one. */
  keywordExample?: string;
}

export interface ItemRouteDocs extends RouteDocs {
  /** The schema of the answer. */
  answer: Type<unknown>;
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

export interface BulkDeleteRouteDocs extends RouteDocs {
  /** Examples of the `{ids}` body, where the route shows its own. */
  examples?: Record<string, BodyExample>;
}

function documented(docs: RouteDocs, defaultErrors: number[], permissionObject?: string): MethodDecorator[] {
  const operation = {
    summary: docs.summary,
    ...(docs.description === undefined ? {} : { description: docs.description }),
    ...(docs.operationId === undefined ? {} : { operationId: docs.operationId }),
  };
  return [
    RequirePermission(docs.permission, permissionObject === undefined ? {} : { object: permissionObject }),
    ApiOperation(operation),
    ApiErrors(...(docs.errors ?? defaultErrors)),
  ];
}

function bodyDocs(body: WriteRouteDocs['body']): MethodDecorator[] {
  if (body === undefined) return [];
  if (typeof body === 'function') return [ApiBody({ type: body })];
  return [ApiJsonBody(body.model, body.examples)];
}

function answerDocs(status: number, docs: ItemRouteDocs): MethodDecorator {
  return ApiResponse(
    docs.answerDescription === undefined ? { status, type: docs.answer } : { status, type: docs.answer, description: docs.answerDescription },
  );
}

/** `GET /` : one page of the resource (skip, limit, with_count, sort). */
export function ListRoute(docs: ListRouteDocs): MethodDecorator {
  return applyDecorators(docs.path === undefined ? Get() : Get(docs.path), ...documented(docs, [400, 403, 404]), ApiListParams(docs.sortable), ApiListResponse(docs.items));
}

/** `POST /_query` : a page filtered by `where` and shaped by `select` in the body. */
export function QueryRoute(docs: QueryRouteDocs): MethodDecorator {
  return applyDecorators(
    Post(docs.path === undefined ? '_query' : `${docs.path}/_query`),
    HttpCode(200),
    ...documented(docs, [400, 403, 404]),
    ApiQueryBody(docs.example, docs.bodyRequired ?? true),
    ApiListParams(docs.sortable),
    ApiListResponse(docs.items),
  );
}

/** `GET /search?keyword=` : a page of those matching the keyword. Declare it before GetRoute, so that "search" is not taken for an id. */
export function SearchRoute(docs: SearchRouteDocs): MethodDecorator {
  const keyword = { name: 'keyword', required: true, type: String };
  return applyDecorators(
    Get('search'),
    ...documented(docs, [400, 403, 404]),
    ApiListParams(docs.sortable),
    // After the list parameters: the document has always listed `keyword` last.
    ApiQuery(docs.keywordExample === undefined ? keyword : { ...keyword, example: docs.keywordExample }),
    ApiListResponse(docs.items),
  );
}

/** `GET /:id` */
export function GetRoute(docs: ItemRouteDocs): MethodDecorator {
  return applyDecorators(Get(':id'), ...documented(docs, [403, 404], 'id'), answerDocs(200, docs));
}

/** `POST /` : 201 with the new resource. */
export function CreateRoute(docs: WriteRouteDocs): MethodDecorator {
  return applyDecorators(Post(), HttpCode(201), ...documented(docs, [400, 403, 404, 409]), ...bodyDocs(docs.body), answerDocs(201, docs));
}

/** `PUT /:id` : replaces the resource (409 IdenticalDocumentError when nothing changes). */
export function ReplaceRoute(docs: WriteRouteDocs): MethodDecorator {
  return applyDecorators(Put(':id'), ...documented(docs, [400, 403, 404, 409], 'id'), ...bodyDocs(docs.body), answerDocs(200, docs));
}

/** `DELETE /:id` : 204. */
export function DeleteRoute(docs: RouteDocs): MethodDecorator {
  return applyDecorators(
    Delete(':id'),
    HttpCode(204),
    ...documented(docs, [403, 404], 'id'),
    ApiResponse({ status: 204, description: 'Deleted' }),
  );
}

/**
 * `DELETE /` with `{"ids": [...]}` (1..1000): 200 `{deleted, not_found}`. The handler takes the
 * body raw (`@Body() body: unknown`) and hands it to parseBulkIds, which checks its shape and
 * answers the contract's error; the document shows the `{ids}` DTO.
 */
export function BulkDeleteRoute(docs: BulkDeleteRouteDocs): MethodDecorator {
  const body = docs.examples === undefined ? ApiBody({ type: BulkDeleteBodyDto }) : ApiJsonBody(BulkDeleteBodyDto, docs.examples);
  return applyDecorators(
    Delete(),
    HttpCode(200),
    ...documented(docs, [400, 403, 404]),
    body,
    ApiResponse({ status: 200, type: BulkDeleteAnswerSchema }),
  );
}
