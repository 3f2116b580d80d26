import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiBody,
  ApiExtraModels,
  ApiHeader,
  type ApiHeaderOptions,
  ApiOperation,
  type ApiOperationOptions,
  ApiParam,
  type ApiParamOptions,
  ApiProduces,
  ApiQuery,
  type ApiQueryOptions,
  ApiResponse,
  type ApiResponseOptions,
  ApiSecurity,
  type SchemaObject,
} from '@nestjs/swagger';
import { ApiJsonBody, ApiListParams, ApiListResponse, type BodyExample } from './api-docs';
import { ApiAuth, ApiErrorResponse, ApiErrors, type ErrorExample } from './openapi';

/**
 * A security requirement of a route, as the document lists it: a scheme the document declares
 * (`bearer`, `basic`, `setup_token`), or `none`: the header is optional (an empty requirement, `{}`).
 */
export type SecurityScheme = 'bearer' | 'basic' | 'setup_token' | 'none';

/** A request body: the DTO, with named examples of its own where the DTO's property examples do not fit. */
export interface RouteBody {
  model: Type<unknown>;
  examples?: Record<string, BodyExample>;
  /** Whether the document marks the body required; left out, required. */
  required?: boolean;
}

/**
 * Everything the OpenAPI document says of one route, in one object: what a stack of Swagger
 * decorators said before. Lists are in the order the document lists them.
 */
export interface ApiRouteDocs extends Pick<ApiOperationOptions, 'description' | 'operationId' | 'deprecated'> {
  summary: string;
  /**
   * Who may call: `token`, a Bearer (user) or Basic (application) token (ApiAuth, which documents
   * the 401); `public`, no token (an empty requirement); or the requirements in the document's order.
   * Left out, the controller's.
   */
  security?: 'token' | 'public' | SecurityScheme[];
  /** Path parameters the document describes beyond the handler's `@Param()`s. */
  params?: ApiParamOptions[];
  headers?: ApiHeaderOptions[];
  query?: ApiQueryOptions[];
  body?: RouteBody;
  /**
   * A list answer `{items, count?}` with the list parameters (skip, limit, with_count, sort): of a
   * DTO's items, which the document names, or of an item schema object, shown inline (events).
   */
  list?: { items: Type<unknown> | SchemaObject; sortable: string };
  /** The answers that are not errors, each with its status. */
  answers?: ApiResponseOptions[];
  /** Schemas the answers refer to by `$ref` only (a `oneOf`). */
  extraModels?: Type<unknown>[];
  produces?: string[];
  /** Error statuses with the common example bodies (ApiErrors). */
  errors?: number[];
  /** Error statuses with a body of the route's own. */
  errorExamples?: Record<number, ErrorExample>;
}

function securityDocs(security: ApiRouteDocs['security']): MethodDecorator[] {
  if (security === undefined) return [];
  if (security === 'token') return [ApiAuth()];
  if (security === 'public') return [ApiSecurity({})];
  return security.map((scheme) => (scheme === 'none' ? ApiSecurity({}) : ApiSecurity(scheme)));
}

/** The list answer `{items, count?}`: of a DTO's items (ApiListResponse), or inline around an item schema object. */
function pageDocs(items: Type<unknown> | SchemaObject): MethodDecorator {
  if (typeof items === 'function') return ApiListResponse(items);
  return ApiResponse({ status: 200, schema: { type: 'object', properties: { items: { type: 'array', items }, count: { type: 'integer' } } } });
}

function bodyDocs(body: RouteBody | undefined): MethodDecorator[] {
  if (body === undefined) return [];
  if (body.examples !== undefined) return [ApiJsonBody(body.model, body.examples, body.required ?? true)];
  return [ApiBody({ type: body.model, ...(body.required === undefined ? {} : { required: body.required }) })];
}

/**
 * One route's OpenAPI description as one decorator (see ApiRouteDocs). The pieces are applied in
 * a fixed order, so that a route's parameters and security requirements are listed as given.
 */
export function ApiRoute(docs: ApiRouteDocs): MethodDecorator {
  const { summary, description, operationId, deprecated } = docs;
  const operation: ApiOperationOptions = { summary };
  if (description !== undefined) operation.description = description;
  if (operationId !== undefined) operation.operationId = operationId;
  if (deprecated !== undefined) operation.deprecated = deprecated;
  return applyDecorators(
    ...(docs.errors === undefined ? [] : [ApiErrors(...docs.errors)]),
    ...Object.entries(docs.errorExamples ?? {}).map(([status, example]) => ApiErrorResponse(Number(status), example)),
    ...(docs.answers ?? []).map((answer) => ApiResponse(answer)),
    ...(docs.list === undefined ? [] : [pageDocs(docs.list.items), ApiListParams(docs.list.sortable)]),
    ...(docs.extraModels === undefined ? [] : [ApiExtraModels(...docs.extraModels)]),
    ...bodyDocs(docs.body),
    ...(docs.headers ?? []).map((header) => ApiHeader(header)),
    ...(docs.query ?? []).map((query) => ApiQuery(query)),
    ...(docs.params ?? []).map((param) => ApiParam(param)),
    ...securityDocs(docs.security),
    ...(docs.produces === undefined ? [] : [ApiProduces(...docs.produces)]),
    ApiOperation(operation),
  );
}
