import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError, type FieldError } from './errors';
import { validationFailure } from './validation';

/**
 * What one JSON request body may hold (contract, "Bounded work and per-object rules"): keys of
 * all objects, elements of all arrays, and nesting of objects and arrays (the top-level value is
 * level 1). Class transformation de-duplicates keys in quadratic time and recurses once per level,
 * and validation answers one error per array element (a 1 MiB array of zeros is 520,000 of them),
 * so all are checked on the raw text, before JSON.parse and before any transformation.
 *
 * Keys and elements have a budget each. Elements get twice the contract's largest list (a bulk
 * delete's 1000 `ids`, 1000 `$in` values), so that such a list fits in a body beside its keys and
 * other arrays, and one element more is answered by the list's own rule (`ids`: 400 naming the
 * field; `$in`: 400 InvalidQuery) rather than by this budget. One shared budget of 1000, as the
 * third review first wrote it, refused a bulk delete of exactly 1000 ids.
 */
export interface JsonBudgetLimits {
  /** Keys of all objects, counted together. */
  maxKeys: number;
  /** Elements of all arrays, counted together. */
  maxElements: number;
  maxDepth: number;
}

export const JSON_BODY_LIMITS: Readonly<JsonBudgetLimits> = { maxKeys: 1000, maxElements: 2000, maxDepth: 32 };

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const COLON = 0x3a; // :
const OPEN_BRACE = 0x7b; // {
const OPEN_BRACKET = 0x5b; // [
const CLOSE_BRACE = 0x7d; // }
const CLOSE_BRACKET = 0x5d; // ]
const COMMA = 0x2c; // ,
const SPACE = 0x20;
const TAB = 0x09;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

const isJsonWhitespace = (byte: number): boolean => byte === SPACE || byte === LINE_FEED || byte === CARRIAGE_RETURN || byte === TAB;

/** Where a body broke the budget, or null when it keeps to it. */
export function jsonBudgetProblem(bytes: Uint8Array, limits: JsonBudgetLimits = JSON_BODY_LIMITS): FieldError | null {
  const tooManyKeys: FieldError = { field: 'request.body', message: `must have at most ${limits.maxKeys} keys in all` };
  const tooManyElements: FieldError = { field: 'request.body', message: `must have at most ${limits.maxElements} array elements in all` };
  let depth = 0;
  let keys = 0;
  let elements = 0;
  let inString = false;
  // Per open level (the budget keeps them few): whether it is an array. And whether the innermost
  // open array has seen no element yet: its first element has no comma before it to count.
  const isArray: boolean[] = [];
  let awaitingFirstElement = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++; // the escaped character, a quote included, stays in the string
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (awaitingFirstElement && byte !== CLOSE_BRACKET && !isJsonWhitespace(byte)) {
      awaitingFirstElement = false;
      if (++elements > limits.maxElements) return tooManyElements;
    }
    if (byte === QUOTE) inString = true;
    // Outside strings, a colon in JSON only ever follows an object key, and a comma in an array
    // starts its next element. Text that is not JSON at all is left to JSON.parse, which answers
    // MalformedJson when it stays within the budget.
    else if (byte === COLON) {
      if (++keys > limits.maxKeys) return tooManyKeys;
    } else if (byte === COMMA && isArray[depth - 1] === true) {
      if (++elements > limits.maxElements) return tooManyElements;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limits.maxDepth) return { field: 'request.body', message: `must be nested at most ${limits.maxDepth} levels deep` };
      isArray[depth - 1] = byte === OPEN_BRACKET;
      awaitingFirstElement = byte === OPEN_BRACKET;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
      awaitingFirstElement = false;
    }
  }
  return null;
}

/**
 * body-parser's `verify` hook for the JSON parser: it sees the raw body (decompressed, not yet
 * decoded) before JSON.parse runs, and what it throws becomes the request's error.
 *
 * Chosen over the alternatives: a JSON.parse reviver sees every key but only after the whole
 * body is parsed, and never sees depth on the way in; neither body-parser nor Express has a key
 * or depth option. This one pass over the bytes is O(n), allocates nothing and stops at the
 * first key or level over the limit. In UTF-8 every byte of a multi-byte character is >= 0x80,
 * so the structural ASCII bytes it looks for cannot appear inside one; a UTF-16 body is decoded
 * first.
 */
export function verifyJsonBudget(_request: IncomingMessage, _response: ServerResponse, body: Buffer, encoding: string): void {
  const utf8 = !encoding || encoding.toLowerCase() === 'utf-8' || encoding.toLowerCase() === 'utf8';
  const bytes = utf8 ? body : Buffer.from(decodeBody(body, encoding), 'utf8');
  const problem = topLevelProblem(bytes) ?? jsonBudgetProblem(bytes);
  if (problem) throw validationFailure([problem]);
}

const NOT_AN_OBJECT: FieldError = { field: 'request.body', message: 'must be a JSON object' };

/**
 * Every route of the service takes a JSON object (contract, "Decisions of the third review"):
 * any other top-level value is refused here, before it is parsed, transformed or validated. An
 * array is known by its first byte; a bare string, number, boolean or null is told from text that
 * is no JSON at all (left to JSON.parse: MalformedJson) by parsing it, cheap for a scalar.
 */
export function topLevelProblem(bytes: Uint8Array): FieldError | null {
  let start = 0;
  while (start < bytes.length && isJsonWhitespace(bytes[start])) start++;
  if (start === bytes.length || bytes[start] === OPEN_BRACE) return null;
  if (bytes[start] === OPEN_BRACKET) return NOT_AN_OBJECT;
  try {
    JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    return null;
  }
  return NOT_AN_OBJECT;
}

function decodeBody(body: Buffer, encoding: string): string {
  try {
    return new TextDecoder(encoding).decode(body);
  } catch {
    // UTF-32 (which body-parser would decode, TextDecoder does not): scanning its raw bytes could
    // mistake part of a character for a quote and miss the structure, so it is refused.
    throw new DomainError('UnsupportedMediaType', 'The request body charset is not supported; send UTF-8');
  }
}
