import { DomainError } from './errors';

/** Query-string booleans: absent means the default; true/false or 1/0, and anything else is a 400 that says so. */
export function parseBooleanParam(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === true || value === 'true' || value === '1') return true;
  if (value === false || value === 'false' || value === '0') return false;
  throw new DomainError('ModelValidationError', `${name} must be true or false (or 1 or 0)`, [{ field: name, message: 'must be true or false (or 1 or 0)' }]);
}
