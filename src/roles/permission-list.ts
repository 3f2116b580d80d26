import { ArrayMaxSize, IsArray, IsOptional, IsString, MaxLength } from 'class-validator';
import { DomainError } from '../common/errors';
import { PermissionExpression } from '../permissions';

/** Longest list a role, application or user may carry in `permissions` or `forbidden`. */
export const MAX_PERMISSION_ENTRIES = 1000;
/** Longest single expression a body may carry in such a list. */
export const MAX_PERMISSION_EXPRESSION_LENGTH = 600;

/**
 * The body checks of an optional `permissions` / `forbidden` list (role and application bodies);
 * the expressions themselves are checked by validatePermissionList in the service. Applied
 * bottom-up like the decorators it replaces, so class-validator reports failures in the same order.
 */
export function IsPermissionExpressionList(): PropertyDecorator {
  const stacked: PropertyDecorator[] = [
    IsOptional(),
    IsArray(),
    ArrayMaxSize(MAX_PERMISSION_ENTRIES),
    IsString({ each: true }),
    MaxLength(MAX_PERMISSION_EXPRESSION_LENGTH, { each: true }),
  ];
  return (target, propertyKey) => {
    for (const decorator of [...stacked].reverse()) decorator(target, propertyKey);
  };
}

const ECHO = 64;
const quoted = (text: string): string => JSON.stringify(text.length > ECHO ? `${text.slice(0, ECHO)}...` : text);

/**
 * Checks every expression of a `permissions` / `forbidden` list and answers it as it will be
 * stored: each entry trimmed of surrounding whitespace, otherwise as the caller wrote it (the
 * permission module normalizes again whenever it reads one). The first invalid entry is a
 * 400 InvalidPermission naming the field, its index and the expression.
 */
export function validatePermissionList(field: string, list: readonly string[] | undefined | null): string[] {
  if (!list) return [];
  return list.map((entry, index) => {
    const text = entry.trim();
    const parsed = PermissionExpression.tryParse(text);
    if (!parsed) {
      let reason = 'not a permission expression';
      try {
        PermissionExpression.parse(text);
      } catch (error) {
        if (error instanceof DomainError) reason = error.message;
      }
      const location = `${field}[${index}]`;
      throw new DomainError('InvalidPermission', `${location} ${quoted(text)}: ${reason}`, [{ field: location, message: reason }]);
    }
    return text;
  });
}
