import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { DomainError, type FieldError } from './errors';

function flatten(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    for (const message of Object.values(error.constraints ?? {})) {
      // class-validator prefixes messages with the property name; the field already says it.
      out.push({ field, message: message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message });
    }
    if (error.children?.length) out.push(...flatten(error.children, field));
  }
  return out;
}

/** One 400 ModelValidationError for these field errors, its message naming the first three. */
export function validationFailure(errors: FieldError[]): DomainError {
  const summary = errors
    .slice(0, 3)
    .map((e) => `${e.field}: ${e.message}`)
    .join('; ');
  return new DomainError('ModelValidationError', summary || 'The request is not valid', errors);
}

/** Global validation: unknown fields are rejected, types are checked, every failure is one 400 body. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors: ValidationError[]) => validationFailure(flatten(errors)),
  });
}
