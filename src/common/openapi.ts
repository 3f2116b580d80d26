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

export interface ErrorExample {
  description: string;
  errorCode: string;
  message: string;
  errors?: { field: string; message: string }[];
}

/** What each error status means, with a body it really answers (Swagger UI shows it per status). */
const ERROR_EXAMPLES: Record<number, ErrorExample> = {
  400: {
    description: 'Invalid request (ModelValidationError, InvalidQuery, ...)',
    errorCode: 'ModelValidationError',
    message: 'request.url: must be an absolute http(s) URL',
    errors: [{ field: 'request.url', message: 'must be an absolute http(s) URL' }],
  },
  401: { description: 'Missing, invalid, expired or revoked token', errorCode: 'InvalidToken', message: 'The token is not valid' },
  403: { description: 'AccessDenied: the caller lacks the permission, or the membership is not the caller’s', errorCode: 'AccessDenied', message: 'Permission webhooks.create is required' },
  404: { description: 'Not found', errorCode: 'NotFound', message: 'Not found' },
  409: { description: 'Conflict (already exists, identical document, ...)', errorCode: 'IdenticalDocumentError', message: 'The update changes nothing' },
  413: { description: 'PayloadTooLarge', errorCode: 'PayloadTooLarge', message: 'The request body is too large' },
  415: { description: 'UnsupportedMediaType', errorCode: 'UnsupportedMediaType', message: 'The request body must be JSON (Content-Type: application/json)' },
  429: { description: 'TooManySignInAttempts: the login or the client address is locked for a while (Retry-After, seconds)', errorCode: 'TooManySignInAttempts', message: 'Too many failed sign-in attempts; try again later' },
};

/** One error answer of a route, with its own example body (not the schema's generic one). */
export function ApiErrorResponse(status: number, example: ErrorExample): MethodDecorator & ClassDecorator {
  const { description, ...body } = example;
  // A 429 says when to come back (RFC 9110 Retry-After).
  const headers = status === 429 ? { 'Retry-After': { description: 'Seconds until the lock ends', schema: { type: 'integer' as const, example: 60 } } } : undefined;
  return ApiResponse({ status, description, type: ErrorBodySchema, example: { statusCode: status, ...body }, ...(headers ? { headers } : {}) });
}

/** Documents the error answers a route can give, all with the one error body. */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiErrorResponse(status, ERROR_EXAMPLES[status] ?? { description: 'Error', errorCode: 'UnhandledExceptionError', message: 'Error' }),
    ),
  );
}

/** A route that takes a Bearer (user) or Basic (application) token. */
export function ApiAuth(): MethodDecorator & ClassDecorator {
  return applyDecorators(ApiBearerAuth('bearer'), ApiBasicAuth('basic'), ApiErrors(401));
}
