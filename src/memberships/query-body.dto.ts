import { ApiPropertyOptional } from '@nestjs/swagger';
import { Allow, IsOptional } from 'class-validator';

/**
 * Body of every `POST .../_query` route of memberships, roles, applications and token listings:
 * `where` and `select` are checked by the query-language translator (400 InvalidQuery), not here.
 */
export class QueryBodyDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { name: { $in: ['a', 'b'] } }, description: 'Filter (query language)' })
  @IsOptional()
  @Allow()
  where?: unknown;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, example: { name: 1 }, description: 'Projection: all 1 or all 0' })
  @IsOptional()
  @Allow()
  select?: unknown;
}

/** Body of a bulk DELETE: checked by parseBulkIds (1..1000 id strings). */
export class BulkDeleteBodyDto {
  @ApiPropertyOptional({ type: [String], example: ['3f0c…', '9a1d…'] })
  @IsOptional()
  @Allow()
  ids?: unknown;
}
