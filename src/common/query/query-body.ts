import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsOptional } from 'class-validator';
import { DomainError } from '../errors';

/**
 * The body of every `POST .../_query` route (contract, "Query language"). `where` and `select`
 * are checked by the query-language translator (400 InvalidQuery), not by the validation pipe.
 */
export class QueryBodyDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Filter: implicit equality, $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists, $and, $or; dotted paths into JSON fields',
    example: { event_type: { $in: ['UserCreated', 'UserUpdated'] }, event_time: { $gte: '2026-01-01T00:00:00Z' } },
  })
  @IsOptional()
  @Allow()
  where?: unknown;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Projection: field names or dotted paths to 1 (keep), or all to 0 (leave out); _id is always kept',
    example: { event_type: 1, 'document.username': 1 },
  })
  @IsOptional()
  @Allow()
  select?: unknown;
}

/** Body of a bulk DELETE: checked by parseBulkIds (1..1000 id strings). */
export class BulkDeleteBodyDto {
  @ApiPropertyOptional({ type: [String], example: ['3f0c8a2e-5b1d-4c7e-9f1a-2b3c4d5e6f70', '9a1d4b6c-2e3f-4a5b-8c7d-0e1f2a3b4c5d'] })
  @IsOptional()
  @Allow()
  ids?: unknown;
}

/** What a `_query` body holds; the translator checks both parts. */
export interface QueryBody {
  where?: unknown;
  select?: unknown;
}

/**
 * Reads `{where?, select?}` from a raw `_query` body. Every `_query` route takes its body raw
 * (`@QueryBodyParam()`), without the validation pipe, so that every malformed query, a stray key
 * included, answers the same 400 InvalidQuery (contract, "Query language").
 */
export function parseQueryBody(body: unknown): QueryBody {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new DomainError('InvalidQuery', 'The query body must be a JSON object such as {"where": {...}, "select": {...}}');
  }
  const unknownKeys = Object.keys(body).filter((key) => key !== 'where' && key !== 'select');
  if (unknownKeys.length) {
    throw new DomainError('InvalidQuery', `The query body takes only "where" and "select", not ${JSON.stringify(unknownKeys[0].slice(0, 64))}`);
  }
  const { where, select } = body as { where?: unknown; select?: unknown };
  return { where, select };
}

/** The parameter decorator of every `_query` route: the request body, read by `parseQueryBody`. */
export const QueryBodyParam = createParamDecorator(
  (_data: unknown, context: ExecutionContext): QueryBody => parseQueryBody(context.switchToHttp().getRequest<{ body?: unknown }>().body),
);
