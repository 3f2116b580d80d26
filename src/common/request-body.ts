import type { ValidationPipe } from '@nestjs/common';
import { DomainError, type FieldError } from './errors';
import { createValidationPipe } from './validation';

/*
 * Bodies that the global ValidationPipe cannot take whole: a user carries custom fields beside its
 * own (so unknown names cannot simply be refused), a user type carries free-form property
 * definitions (which class-transformer would copy and silently strip keys from). Their handlers
 * take the raw JSON, split it, and validate the fixed part with the same pipe as everywhere else.
 */

let validationPipe: ValidationPipe | undefined;

/** Validates `plain` against a DTO class exactly as the global pipe would (same 400 body, silently dropped keys refused). */
export async function validateDto<T extends object>(dto: new () => T, plain: Record<string, unknown>): Promise<T> {
  validationPipe ??= createValidationPipe();
  return (await validationPipe.transform(plain, { type: 'body', metatype: dto, data: undefined })) as T;
}

/** The field errors of a validation failure, or rethrows anything else. */
export function fieldErrorsOf(error: unknown): FieldError[] {
  if (error instanceof DomainError && error.code === 'ModelValidationError') {
    return error.errors ?? [{ field: 'body', message: error.message }];
  }
  throw error;
}


export function isJsonObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The request body as a JSON object, or 400 (an array, or no body at all). */
export function requireJsonObject(body: unknown): Record<string, unknown> {
  if (!isJsonObject(body)) {
    throw new DomainError('ModelValidationError', 'The request body must be a JSON object', [
      { field: 'body', message: 'must be a JSON object' },
    ]);
  }
  return body;
}

/** Splits a body into the keys a DTO declares and the rest, own keys only. */
export function splitBody(body: Record<string, unknown>, known: ReadonlySet<string>): { known: Record<string, unknown>; rest: Record<string, unknown> } {
  const knownPart: Record<string, unknown> = {};
  // No prototype, so that even a `__proto__` key stays an ordinary entry to be refused by name.
  const rest: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (known.has(key)) knownPart[key] = body[key];
    else rest[key] = body[key];
  }
  return { known: knownPart, rest };
}

