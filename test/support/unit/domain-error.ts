import { DomainError, type ErrorCode } from '../../../src/common/errors';
import { thrownBy } from './thrown';

/**
 * For specs: runs `fn`, checks that it threw a DomainError with this code and HTTP status, and
 * answers that error so the spec can go on to its message or field errors. A `fn` that returns,
 * or throws anything else, fails the test here.
 */
export function domainErrorOf(fn: () => unknown, code: ErrorCode, status: number): DomainError {
  const error = thrownBy(fn, DomainError);
  expect(error.code).toBe(code);
  expect(error.status).toBe(status);
  return error;
}
