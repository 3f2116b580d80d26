import { applyDecorators } from '@nestjs/common';
import { ApiBasicAuth, ApiBearerAuth, ApiProperty, ApiPropertyOptional, ApiResponse } from '@nestjs/swagger';

/** The error body every failure answers with (contract, "Error body"). */
export class ErrorBodySchema {
  @ApiProperty({ example: 401 }) statusCode!: number;
  @ApiProperty({ example: 'InvalidToken' }) errorCode!: string;
  @ApiProperty({ example: 'The token is not valid' }) message!: string;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
  })
  errors?: { field: string; message: string }[];
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request (ModelValidationError, InvalidQuery, ...)',
  401: 'Missing, invalid, expired or revoked token',
  403: 'AccessDenied: the caller lacks the permission, or the membership is not the caller’s',
  404: 'Not found',
  409: 'Conflict (already exists, identical document, ...)',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
};

/** Documents the error answers a route can give, all with the one error body. */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) => ApiResponse({ status, description: ERROR_DESCRIPTIONS[status] ?? 'Error', type: ErrorBodySchema })),
  );
}

/** A route that takes a Bearer (user) or Basic (application) token. */
export function ApiAuth(): MethodDecorator & ClassDecorator {
  return applyDecorators(ApiBearerAuth('bearer'), ApiBasicAuth('basic'), ApiErrors(401));
}
