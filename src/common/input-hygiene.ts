import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { DomainError, type FieldError } from './errors';
import { validationFailure } from './validation';

/*
 * Text that PostgreSQL cannot store (a NUL, a lone UTF-16 surrogate) or that is not text at all
 * (bytes that are not UTF-8) is refused here, once for every route, before routing, validation or
 * any lookup: otherwise it reaches the driver and answers 500.
 */

/** A request target is printable ASCII (RFC 3986); anything else was sent raw, not percent-encoded. */
const NOT_PRINTABLE_ASCII = /[^\x21-\x7e]/;

const invalid = (field: string, message: string): DomainError => validationFailure([{ field, message }]);

/** Decodes one percent-encoded component; null when the bytes are not UTF-8. */
function decodeComponent(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    return null;
  }
}

/** A NUL, or a UTF-16 surrogate without its pair (which no UTF-8 text can hold). */
// eslint-disable-next-line no-control-regex -- the NUL is exactly what this looks for
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function isUnstorable(text: string): boolean {
  return UNSTORABLE.test(text);
}

/** A bracket, raw or percent-encoded: somewhere in a query, before its names are looked at. */
const BRACKET = /[[\]]|%5[bd]/i;

/**
 * Whether a query parameter's name holds a bracket. The service reads `types=a,b`; a client that
 * serialises a list as `types[]=a&types[]=b` (axios, qs) would otherwise have its parameter
 * ignored without a word, and a stream of every event type opened where it asked for two.
 */
function hasBracketedName(query: string): boolean {
  if (!BRACKET.test(query)) return false;
  return query.split('&').some((pair) => BRACKET.test(pair.split('=', 1)[0]));
}

/**
 * Path and query: printable ASCII, percent-encodings that decode to UTF-8 without a NUL (400
 * ModelValidationError on `request.url` / `request.query`), and query names without brackets;
 * undefined when they are. Ids in the path are judged by the access guard (isPossibleId), which
 * knows which parameter names a membership.
 */
export function hostileUrlProblem(request: Request): DomainError | undefined {
  const url = request.url;
  if (NOT_PRINTABLE_ASCII.test(url)) return invalid('request.url', 'must be percent-encoded ASCII');
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  // Only what is percent-encoded needs decoding: plain printable ASCII holds no NUL and is UTF-8.
  if (path.includes('%')) {
    for (const segment of path.split('/')) {
      if (!segment.includes('%')) continue;
      const decoded = decodeComponent(segment);
      if (decoded === null || isUnstorable(decoded)) return invalid('request.url', 'must be UTF-8 text without NUL characters');
    }
  }
  if (queryStart !== -1 && url.indexOf('%', queryStart) !== -1) {
    for (const pair of url.slice(queryStart + 1).split('&')) {
      if (!pair.includes('%')) continue;
      const decoded = decodeComponent(pair);
      if (decoded === null || isUnstorable(decoded)) return invalid('request.query', 'must be UTF-8 text without NUL characters');
    }
  }
  if (queryStart !== -1 && hasBracketedName(url.slice(queryStart + 1))) {
    return invalid('request.query', 'must not name a parameter with brackets: send a list as one comma-separated value (types=a,b)');
  }
  return undefined;
}

/** Set by the body parser's verify hook when the raw body holds a `\u` escape (see below). */
const HAS_UNICODE_ESCAPE = Symbol('hasUnicodeEscape');
type MarkedRequest = IncomingMessage & { [HAS_UNICODE_ESCAPE]?: boolean };

/**
 * express.json's `verify` hook, on the raw bytes before parsing: bytes that are not UTF-8 are a
 * 400 (body-parser would quietly turn them into U+FFFD). A NUL or a lone surrogate can then only
 * come from a `\u` escape, so only a body that has one is walked after parsing.
 */
export function verifyJsonBytes(request: IncomingMessage, _response: ServerResponse, body: Buffer, encoding: string): void {
  if (/^utf-?8$/i.test(encoding) && !isUtf8(body)) throw invalid('request.body', 'must be UTF-8 text');
  if (body.includes('\\u')) (request as MarkedRequest)[HAS_UNICODE_ESCAPE] = true;
}

/**
 * express.urlencoded's `verify` hook for the OpenID Provider's forms: the same rules as the query
 * (printable ASCII, percent-encodings that decode to UTF-8 without a NUL), before parsing, since the
 * parser would quietly turn bad bytes into U+FFFD.
 */
export function verifyFormBytes(_request: IncomingMessage, _response: ServerResponse, body: Buffer): void {
  const text = body.toString('latin1');
  if (NOT_PRINTABLE_ASCII.test(text.replace(/[\r\n]+$/, ''))) throw invalid('request.body', 'must be form-encoded ASCII');
  if (!text.includes('%')) return;
  for (const pair of text.split('&')) {
    if (!pair.includes('%')) continue;
    const decoded = decodeComponent(pair.replace(/\+/g, ' '));
    if (decoded === null || isUnstorable(decoded)) throw invalid('request.body', 'must be UTF-8 text without NUL characters');
  }
}

/** Where the first unstorable string of a parsed JSON value is (a key or a value), or null. */
function findUnstorable(root: unknown): string | null {
  // An explicit stack, not recursion: the body may be nested thousands deep.
  const stack: { value: unknown; path: string }[] = [{ value: root, path: 'request.body' }];
  while (stack.length) {
    const { value, path } = stack.pop() as { value: unknown; path: string };
    if (typeof value === 'string') {
      if (isUnstorable(value)) return path;
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => stack.push({ value: item, path: `${path}[${index}]` }));
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (isUnstorable(key)) return path;
        stack.push({ value: item, path: `${path}.${key}` });
      }
    }
  }
  return null;
}

/** After express.json: a NUL or a lone surrogate anywhere in the body (keys too) is a 400; undefined when there is none. */
export function unstorableBodyProblem(request: Request): DomainError | undefined {
  if (!(request as MarkedRequest)[HAS_UNICODE_ESCAPE]) return undefined;
  const field = findUnstorable(request.body);
  if (field === null) return undefined;
  const errors: FieldError[] = [{ field: field.length > 200 ? `${field.slice(0, 200)}…` : field, message: 'must be UTF-8 text without NUL characters' }];
  return validationFailure(errors);
}
