import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional, ApiQuery } from '@nestjs/swagger';
import { DomainError } from '../common/errors';

/** The body of `POST .../_query` (contract, "Query language"). */
export class QueryBodyDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'Filter: implicit equality, $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists, $and, $or; dotted paths into JSON fields',
    example: { event_type: { $in: ['UserCreated', 'UserUpdated'] }, event_time: { $gte: '2026-01-01T00:00:00Z' } },
  })
  where?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Projection: field names or dotted paths to 1 (keep) or all to 0 (leave out); _id is always kept',
    example: { event_type: 1, 'document.username': 1 },
  })
  select?: Record<string, unknown>;
}

/**
 * Reads `{where?, select?}` from a `_query` body. The body is taken raw (not through the
 * validation pipe) so that every malformed query answers the same 400 InvalidQuery.
 */
export function parseQueryBody(body: unknown): { where?: unknown; select?: unknown } {
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

/** The contract's list query parameters. */
export function ApiListParams(sortable: string): MethodDecorator {
  return applyDecorators(
    ApiQuery({ name: 'limit', required: false, type: Number, description: '1..1000, default 100' }),
    ApiQuery({ name: 'skip', required: false, type: Number, description: 'default 0' }),
    ApiQuery({ name: 'sort', required: false, type: String, description: sortable }),
    ApiQuery({ name: 'with_count', required: false, type: Boolean, description: 'answer the total count too' }),
  );
}
