import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiQuery, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { LIST_LIMITS } from './query/list-params';

/**
 * OpenAPI pieces shared by every resource's routes: the `sys`
 * block, the list answer and the list query parameters.
 */
export class SysSchema {
  @ApiProperty({ example: '2026-01-01T00:00:00.000Z' }) created_at!: string;
  @ApiProperty({ example: 'system', description: 'Caller id, or `system`' }) created_by!: string;
  @ApiPropertyOptional({ example: '2026-01-02T00:00:00.000Z' }) modified_at?: string;
  @ApiPropertyOptional() modified_by?: string;
}

/** The `sys` block without examples: webhooks and token code policies answer it under this name. */
export class SysDto {
  @ApiProperty() created_at!: string;
  @ApiProperty() created_by!: string;
  @ApiPropertyOptional() modified_at?: string;
  @ApiPropertyOptional() modified_by?: string;
}

/** The fields a named resource answers first; each resource's schema extends it with its own. */
export class NamedResourceSchema {
  @ApiProperty() _id!: string;
  @ApiProperty() name!: string;
  @ApiProperty() slug!: string;
  @ApiProperty({ nullable: true, type: String }) description!: string | null;
}

export class BulkDeleteAnswerSchema {
  @ApiProperty({ type: [String] }) deleted!: string[];
  @ApiProperty({ type: [String] }) not_found!: string[];
}

/** `200 {items: [model], count?}` */
export function ApiListResponse(model: Type<unknown>): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status: 200,
      description: '`count` is present only with `with_count=true`',
      schema: {
        type: 'object',
        required: ['items'],
        properties: {
          items: { type: 'array', items: { $ref: getSchemaPath(model) } },
          count: { type: 'integer' },
        },
      },
    }),
  );
}

/** `skip`, `limit`, `with_count`, `sort` (contract, "Lists, queries, updates, bulk delete"). */
export function ApiListParams(sortable: string): MethodDecorator {
  return applyDecorators(
    ApiQuery({
      name: 'skip',
      required: false,
      schema: { type: 'integer', minimum: 0, maximum: LIST_LIMITS.maxSkip, default: LIST_LIMITS.defaultSkip },
      description: 'How many matches to pass over',
    }),
    ApiQuery({
      name: 'limit',
      required: false,
      schema: { type: 'integer', minimum: LIST_LIMITS.minLimit, maximum: LIST_LIMITS.maxLimit, default: LIST_LIMITS.defaultLimit },
      description: 'How many matches to answer at most; more than the maximum is 400 InvalidQuery',
    }),
    ApiQuery({ name: 'with_count', required: false, type: Boolean, description: 'Adds `count` (all matches)' }),
    ApiQuery({ name: 'sort', required: false, type: String, description: `"field" or "field asc|desc"; sortable: ${sortable}` }),
  );
}

/** A named request-body example: Swagger UI offers each in a list and prefills the first. */
export interface BodyExample {
  summary: string;
  value: object;
}

/** A JSON body of this DTO with examples of its own (where the DTO's property examples do not fit the route). */
export function ApiJsonBody(model: Type<unknown>, examples: Record<string, BodyExample>, required = true): MethodDecorator {
  return applyDecorators(ApiExtraModels(model), ApiBody({ required, schema: { $ref: getSchemaPath(model) }, examples }));
}

/** The `_query` body's example, with this resource's own fields. */
export function queryBodyExamples(example: { where?: object; select?: object }): Record<string, BodyExample> {
  return { query: { summary: 'where and select', value: example } };
}
