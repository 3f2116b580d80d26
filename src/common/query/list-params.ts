import { DomainError } from '../errors';

/** The list query parameters of the contract: `skip`, `limit`, `with_count`, `sort`. */
export interface ListParams {
  skip: number;
  limit: number;
  withCount: boolean;
  /** Unchecked here; give it to translateSort with the resource's schema. */
  sort?: string;
}

export const LIST_LIMITS = {
  defaultSkip: 0,
  maxSkip: 1_000_000,
  defaultLimit: 100,
  minLimit: 1,
  maxLimit: 1000,
} as const;

function invalidParam(name: string, message: string): DomainError {
  return new DomainError('InvalidQuery', `${name}: ${message}`);
}

function integerParam(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  let n: number | undefined;
  if (typeof value === 'number' && Number.isInteger(value)) n = value;
  // Plain decimal digits only: no sign, exponent, fraction or spaces; 8 digits cover the range.
  else if (typeof value === 'string' && /^\d{1,8}$/.test(value)) n = Number(value);
  if (n === undefined || n < min || n > max) {
    throw invalidParam(name, `must be an integer from ${min} to ${max}`);
  }
  return n;
}

function booleanParam(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw invalidParam(name, 'must be true or false');
}

/**
 * Reads `skip` (default 0, 0..1000000), `limit` (default 100, 1..1000), `with_count`
 * ('true'/'false' or a boolean, default false) and `sort` (one string) from a request's query.
 * Other parameters are left alone; a repeated or malformed one is 400 InvalidQuery naming it.
 */
export function parseListParams(query: Record<string, unknown>): ListParams {
  const params: ListParams = {
    skip: integerParam('skip', query.skip, LIST_LIMITS.defaultSkip, 0, LIST_LIMITS.maxSkip),
    limit: integerParam('limit', query.limit, LIST_LIMITS.defaultLimit, LIST_LIMITS.minLimit, LIST_LIMITS.maxLimit),
    withCount: booleanParam('with_count', query.with_count),
  };
  const sort = query.sort;
  if (sort !== undefined) {
    if (typeof sort !== 'string') throw invalidParam('sort', 'must be one string such as "field" or "field desc"');
    params.sort = sort;
  }
  return params;
}
