import type { IncomingMessage, ServerResponse } from 'node:http';
import { DomainError, type FieldError } from './errors';
import { validationFailure } from './validation';

/**
 * What one JSON request body may hold (contract, "Bounded work and per-object rules"): keys of
 * all objects together, and nesting of objects and arrays (the top-level value is level 1).
 * Class transformation de-duplicates keys in quadratic time and recurses once per level, so
 * both are checked on the raw text, before JSON.parse and before any transformation.
 */
export interface JsonBudgetLimits {
  maxKeys: number;
  maxDepth: number;
}

export const JSON_BODY_LIMITS: Readonly<JsonBudgetLimits> = { maxKeys: 1000, maxDepth: 32 };

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const COLON = 0x3a; // :
const OPEN_BRACE = 0x7b; // {
const OPEN_BRACKET = 0x5b; // [
const CLOSE_BRACE = 0x7d; // }
const CLOSE_BRACKET = 0x5d; // ]

/** Where a body broke the budget, or null when it keeps to it. */
export function jsonBudgetProblem(bytes: Uint8Array, limits: JsonBudgetLimits = JSON_BODY_LIMITS): FieldError | null {
  let depth = 0;
  let keys = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === BACKSLASH) i++; // the escaped character, a quote included, stays in the string
      else if (byte === QUOTE) inString = false;
      continue;
    }
    if (byte === QUOTE) inString = true;
    // Outside strings, a colon in JSON only ever follows an object key. Text that is not JSON at
    // all is left to JSON.parse, which answers MalformedJson when it stays within the budget.
    else if (byte === COLON) {
      if (++keys > limits.maxKeys) return { field: 'request.body', message: `must have at most ${limits.maxKeys} keys in all` };
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limits.maxDepth) return { field: 'request.body', message: `must be nested at most ${limits.maxDepth} levels deep` };
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) depth--;
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
  const problem = jsonBudgetProblem(bytes);
  if (problem) throw validationFailure([problem]);
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
