import { DomainError } from './errors';

/** Query-string booleans: absent means the default; anything but true/false is a 400. */
export function parseBooleanParam(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === true || value === 'true' || value === '1') return true;
  if (value === false || value === 'false' || value === '0') return false;
  throw new DomainError('ModelValidationError', `${name} must be true or false`, [{ field: name, message: 'must be true or false' }]);
}
