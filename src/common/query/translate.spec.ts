import { PGlite } from '@electric-sql/pglite';
import { and, sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/pglite';
import type { DomainError } from '../errors';
import { domainErrorOf } from '../../../test/support/unit/domain-error';
import {
  QUERY_LIMITS,
  applyProjection,
  normalizeIsoTimestamp,
  parseListParams,
  parseSelect,
  translateSort,
  translateWhere,
  whereReadsUnindexed,
  type FieldType,
  type QuerySchema,
} from './index';

const dialect = new PgDialect();

/** A schema shaped like the events resource, with plain column names for readable SQL. */
const schema: QuerySchema = {
  fields: {
    _id: { sql: sql.raw('"id"'), type: 'string', sortable: true },
    event_type: { sql: sql.raw('"event_type"'), type: 'string', sortable: true },
    event_time: { sql: sql.raw('"event_time"'), type: 'timestamp', sortable: true },
    count: { sql: sql.raw('"count"'), type: 'integer' },
    score: { sql: sql.raw('"score"'), type: 'number' },
    is_active: { sql: sql.raw('"is_active"'), type: 'boolean' },
    document: { sql: sql.raw('"document"'), type: 'json' },
    permissions: { sql: sql.raw('"permissions"'), type: 'string_array' },
    'sys.created_at': { sql: sql.raw('"created_at"'), type: 'timestamp', sortable: true },
  },
  hidden: ['password_hash', 'secret_digest'],
};

function render(fragment: SQL): { sql: string; params: unknown[] } {
  const query = dialect.sqlToQuery(fragment);
  return { sql: query.sql, params: query.params };
}

function where(filter: unknown): { sql: string; params: unknown[] } {
  const fragment = translateWhere(schema, filter);
  if (fragment === undefined) throw new Error('expected a condition');
  return render(fragment);
}

/** Runs fn, expects a 400 InvalidQuery whose message matches and stays short. */
function expectInvalid(fn: () => unknown, message?: RegExp | string): DomainError {
  const error = domainErrorOf(fn, 'InvalidQuery', 400);
  expect(error.message.length).toBeLessThan(400);
  if (message !== undefined) expect(error.message).toMatch(message);
  return error;
}

function nested(levels: number): Record<string, unknown> {
  let filter: Record<string, unknown> = { event_type: 'x' };
  for (let i = 1; i < levels; i++) filter = { $and: [filter] };
  return filter;
}

describe('translateWhere: SQL text and parameters', () => {
  it.each([undefined, null, {}])('answers undefined for an absent or empty filter: %p', (filter) => {
    expect(translateWhere(schema, filter)).toBeUndefined();
  });

  it('refuses a filter that is not an object', () => {
    expectInvalid(() => translateWhere(schema, []), /where: must be a JSON object, got an array/);
    expectInvalid(() => translateWhere(schema, 'event_type = 1'), /got a string/);
    expectInvalid(() => translateWhere(schema, 42), /got a number/);
  });

  it('translates implicit equality and $eq to a bound parameter', () => {
    expect(where({ event_type: 'UserCreated' })).toEqual({ sql: '("event_type" = $1)', params: ['UserCreated'] });
    expect(where({ event_type: { $eq: 'UserCreated' } })).toEqual({
      sql: '("event_type" = $1)',
      params: ['UserCreated'],
    });
  });

  it('ANDs several fields of one object, parenthesised', () => {
    expect(where({ event_type: 'A', count: 2 })).toEqual({
      sql: '(("event_type" = $1 and "count" = $2::bigint))',
      params: ['A', 2],
    });
  });

  it('ANDs several operators on one field', () => {
    expect(where({ count: { $gte: 1, $lt: 5 } })).toEqual({
      sql: '(("count" >= $1::bigint and "count" < $2::bigint))',
      params: [1, 5],
    });
  });

  it('uses IS NULL / IS NOT NULL for null and IS DISTINCT FROM for $ne', () => {
    expect(where({ event_type: null }).sql).toBe('("event_type" is null)');
    expect(where({ event_type: { $eq: null } }).sql).toBe('("event_type" is null)');
    expect(where({ event_type: { $ne: null } }).sql).toBe('("event_type" is not null)');
    expect(where({ event_type: { $ne: 'A' } })).toEqual({
      sql: '("event_type" is distinct from $1)',
      params: ['A'],
    });
  });

  it('translates $in and $nin (with NULL matching $nin) and their empty forms', () => {
    expect(where({ event_type: { $in: ['A', 'B'] } })).toEqual({
      sql: '("event_type" in ($1, $2))',
      params: ['A', 'B'],
    });
    expect(where({ event_type: { $nin: ['A', 'B'] } })).toEqual({
      sql: '(("event_type" is null or "event_type" not in ($1, $2)))',
      params: ['A', 'B'],
    });
    expect(where({ event_type: { $in: [] } }).sql).toBe('(false)');
    expect(where({ event_type: { $nin: [] } }).sql).toBe('(true)');
  });

  it('translates the ordering operators with typed parameters', () => {
    expect(where({ count: { $gt: 1 } })).toEqual({ sql: '("count" > $1::bigint)', params: [1] });
    expect(where({ count: { $gte: 1 } }).sql).toBe('("count" >= $1::bigint)');
    expect(where({ count: { $lt: 1 } }).sql).toBe('("count" < $1::bigint)');
    expect(where({ count: { $lte: 1 } }).sql).toBe('("count" <= $1::bigint)');
    expect(where({ score: { $lt: 2.5 } })).toEqual({ sql: '("score" < $1::numeric)', params: [2.5] });
    expect(where({ event_type: { $gt: 'M' } })).toEqual({ sql: '("event_type" > $1)', params: ['M'] });
  });

  it('translates $exists', () => {
    expect(where({ event_type: { $exists: true } }).sql).toBe('("event_type" is not null)');
    expect(where({ event_type: { $exists: false } }).sql).toBe('("event_type" is null)');
    expect(where({ 'document.a': { $exists: true } })).toEqual({
      sql: '(("document" #> $1::text[]) is not null)',
      params: ['{"a"}'],
    });
  });

  it('translates $and and $or with their own parentheses', () => {
    expect(where({ $or: [{ event_type: 'A' }, { count: 1 }] })).toEqual({
      sql: '(("event_type" = $1 or "count" = $2::bigint))',
      params: ['A', 1],
    });
    expect(where({ $and: [{ event_type: 'A' }, { $or: [{ count: 1 }, { count: 2 }] }] })).toEqual({
      sql: '(("event_type" = $1 and ("count" = $2::bigint or "count" = $3::bigint)))',
      params: ['A', 1, 2],
    });
    expect(where({ $and: [{}] }).sql).toBe('(true)');
  });

  it('refuses empty or malformed $and / $or', () => {
    expectInvalid(() => translateWhere(schema, { $and: [] }), /\$and takes a non-empty array/);
    expectInvalid(() => translateWhere(schema, { $or: {} }), /\$or takes a non-empty array/);
    expectInvalid(() => translateWhere(schema, { $or: [1] }), /each filter must be a JSON object, got a number/);
    expectInvalid(() => translateWhere(schema, { $or: [[]] }), /got an array/);
    expectInvalid(() => translateWhere(schema, { event_type: { $and: [] } }), /belongs at filter level/);
  });

  it('compares timestamps as time with a normalised, bound value', () => {
    expect(where({ event_time: { $gte: '2026-01-01T00:00:00Z' } })).toEqual({
      sql: '("event_time" >= $1::timestamptz)',
      params: ['2026-01-01T00:00:00+00:00'],
    });
    expect(where({ event_time: '2026-01-01' }).params).toEqual(['2026-01-01T00:00:00+00:00']);
    expect(where({ 'sys.created_at': { $lt: '2026-01-01T10:20:30.123456789+05:30' } })).toEqual({
      sql: '("created_at" < $1::timestamptz)',
      params: ['2026-01-01T10:20:30.123456+05:30'],
    });
    expect(where({ event_time: { $in: ['2026-01-01T00:00Z', '2026-01-02T00:00:00-0100'] } })).toEqual({
      sql: '("event_time" in ($1::timestamptz, $2::timestamptz))',
      params: ['2026-01-01T00:00:00+00:00', '2026-01-02T00:00:00-01:00'],
    });
  });

  it.each([
    ['2026-02-30T00:00:00Z'],
    ['2025-02-29'],
    ['2026-13-01'],
    ['2026-00-10'],
    ['2026-01-01T24:00:00Z'],
    ['2026-01-01T00:60:00Z'],
    ['2026-01-01T00:00:60Z'],
    ['2026-01-01T00:00:00'], // no zone: ambiguous
    ['2026-01-01T00:00:00+15:00'],
    ['0000-01-01'],
    ['yesterday'],
    ['2026-1-1'],
    [' 2026-01-01'],
    ['2026-01-01T00:00:00Z; drop table events'],
    [''],
  ])('refuses the invalid timestamp %j', (value) => {
    expectInvalid(() => translateWhere(schema, { event_time: { $gte: value } }), /ISO 8601/);
  });

  it('refuses timestamps of the wrong JSON type', () => {
    expectInvalid(() => translateWhere(schema, { event_time: 1767225600000 }), /expects an ISO 8601 timestamp.*got a number/);
    expectInvalid(() => translateWhere(schema, { event_time: { $gt: {} } }), /got an object/);
  });

  it('compares json paths as jsonb with the path and the value bound', () => {
    expect(where({ 'document.sys.created_by': 'system' })).toEqual({
      sql: '(("document" #> $1::text[]) = $2::jsonb)',
      params: ['{"sys","created_by"}', '"system"'],
    });
    expect(where({ 'document.n': 1 }).params).toEqual(['{"n"}', '1']);
    expect(where({ 'document.n': '1' }).params).toEqual(['{"n"}', '"1"']);
    expect(where({ document: { a: [1, { b: true }] } })).toEqual({
      sql: '("document" = $1::jsonb)',
      params: ['{"a":[1,{"b":true}]}'],
    });
    expect(where({ 'document.n': { $ne: 1 } }).sql).toBe('(("document" #> $1::text[]) is distinct from $2::jsonb)');
    expect(where({ 'document.n': { $in: [1, 'x', { c: 1 }] } })).toEqual({
      sql: '(("document" #> $1::text[]) in ($2::jsonb, $3::jsonb, $4::jsonb))',
      params: ['{"n"}', '1', '"x"', '{"c":1}'],
    });
    expect(where({ 'document.n': { $nin: [1] } }).sql).toBe(
      '((("document" #> $1::text[]) is null or ("document" #> $2::text[]) not in ($3::jsonb)))',
    );
  });

  it('limits json ordering to values of the same JSON type', () => {
    expect(where({ 'document.n': { $gt: 1 } })).toEqual({
      sql: "((jsonb_typeof((\"document\" #> $1::text[])) = 'number' and (\"document\" #> $2::text[]) > $3::jsonb))",
      params: ['{"n"}', '{"n"}', '1'],
    });
    expect(where({ 'document.name': { $lte: 'm' } }).sql).toContain("= 'string' and");
    expectInvalid(() => translateWhere(schema, { 'document.n': { $gt: true } }), /takes a number or a string, got a boolean/);
    expectInvalid(() => translateWhere(schema, { 'document.n': { $gt: { a: 1 } } }), /got an object/);
    expectInvalid(() => translateWhere(schema, { 'document.n': { $gt: null } }), /cannot compare with null/);
  });

  it('matches json null and missing for null', () => {
    expect(where({ 'document.n': null }).sql).toBe(
      "(((\"document\" #> $1::text[]) is null or (\"document\" #> $2::text[]) = 'null'::jsonb))",
    );
    expect(where({ 'document.n': { $ne: null } }).sql).toBe(
      "(((\"document\" #> $1::text[]) is not null and (\"document\" #> $2::text[]) <> 'null'::jsonb))",
    );
  });

  it('treats string_array equality and $in as "contains"', () => {
    expect(where({ permissions: 'users:read' })).toEqual({
      sql: '("permissions" @> $1::jsonb)',
      params: ['["users:read"]'],
    });
    expect(where({ permissions: { $ne: 'users:read' } }).sql).toBe(
      '(("permissions" is null or not ("permissions" @> $1::jsonb)))',
    );
    expect(where({ permissions: { $in: ['a', 'b'] } })).toEqual({
      sql: '("permissions" ?| array[$1, $2]::text[])',
      params: ['a', 'b'],
    });
    expect(where({ permissions: { $nin: ['a'] } }).sql).toBe(
      '(("permissions" is null or not ("permissions" ?| array[$1]::text[])))',
    );
    expect(where({ permissions: null }).sql).toBe('("permissions" is null)');
    expectInvalid(() => translateWhere(schema, { permissions: { $gt: 'a' } }), /not supported on the list field/);
    expectInvalid(() => translateWhere(schema, { permissions: ['a'] }), /expects a string.*got an array/);
    expectInvalid(() => translateWhere(schema, { permissions: { $in: [1] } }), /got a number/);
  });

  it.each([
    ['$where', { $where: 'sleep(10)' }],
    ['$regex', { event_type: { $regex: '^A' } }],
    ['$regex', { $regex: '^A' }],
    ['$expr', { $expr: { $gt: ['$a', '$b'] } }],
    ['$function', { $function: { body: 'x' } }],
    ['$not', { event_type: { $not: { $eq: 'A' } } }],
    ['$nor', { $nor: [{ event_type: 'A' }] }],
    ['$text', { $text: { $search: 'x' } }],
    ['$elemMatch', { permissions: { $elemMatch: { $eq: 'a' } } }],
    ['$x', { count: { $x: 1 } }],
  ])('refuses the operator %s', (operator, filter) => {
    const error = expectInvalid(() => translateWhere(schema, filter), /is not supported; supported operators:/);
    expect(error.message).toContain(`"${operator}"`);
  });

  it('refuses a condition that mixes operators and plain keys', () => {
    expectInvalid(() => translateWhere(schema, { document: { $eq: 1, a: 2 } }), /mixes operators with plain keys/);
  });

  it('treats SQL in a field name as an unknown field', () => {
    expectInvalid(
      () => translateWhere(schema, { 'a; drop table users': 1 }),
      /where: unknown field "a; drop table users"; known fields: _id, event_type/,
    );
    expectInvalid(() => translateWhere(schema, { 'event_type"; --': 1 }), /unknown field/);
    expectInvalid(() => translateWhere(schema, { "document.a'); drop table x; --": 1 }), /field path .* is invalid/);
  });

  it('keeps SQL in values out of the SQL text', () => {
    const hostile = "x'); drop table users; --";
    for (const filter of [
      { event_type: hostile },
      { event_type: { $in: [hostile, 'y'] } },
      { 'document.a': hostile },
      { document: { [hostile]: hostile } },
      { permissions: hostile },
      { permissions: { $in: [hostile] } },
    ]) {
      const query = where(filter);
      expect(query.sql).not.toMatch(/drop/i);
      expect(JSON.stringify(query.params)).toMatch(/drop table users/);
    }
  });

  it('does not resolve prototype names as fields', () => {
    const filter: unknown = JSON.parse('{"__proto__": {"x": 1}}');
    expectInvalid(() => translateWhere(schema, filter), /unknown field "__proto__"/);
    expectInvalid(() => translateWhere(schema, { constructor: 1 }), /unknown field "constructor"/);
    expectInvalid(() => translateWhere(schema, { toString: 1 }), /unknown field "toString"/);
    expectInvalid(() => translateWhere(schema, { hasOwnProperty: 1 }), /unknown field/);
  });

  it('allows 8 levels of nesting and refuses 9', () => {
    expect(where(nested(QUERY_LIMITS.maxDepth)).params).toEqual(['x']);
    expectInvalid(() => translateWhere(schema, nested(9)), /nested more than 8 levels deep/);
    expectInvalid(() => translateWhere(schema, nested(10_000)), /nested more than 8 levels deep/);
  });

  it('allows 1000 $in values and refuses 1001', () => {
    const values = Array.from({ length: 1000 }, (_, i) => `v${i}`);
    expect(where({ event_type: { $in: values } }).params).toHaveLength(1000);
    expectInvalid(
      () => translateWhere(schema, { event_type: { $in: [...values, 'one more'] } }),
      'where: $in on "event_type" has more than 1000 values',
    );
    expectInvalid(() => translateWhere(schema, { event_type: { $nin: [...values, 'x'] } }), /\$nin .* more than 1000/);
  });

  it('refuses a 10,000-value $in at once', () => {
    const values = Array.from({ length: 10_000 }, (_, i) => i);
    // Time is not asserted (machines vary): the length is checked before any per-value work.
    expectInvalid(() => translateWhere(schema, { count: { $in: values } }), /more than 1000 values/);
  });

  it('refuses more than 2000 nodes in all', () => {
    const values = Array.from({ length: 700 }, (_, i) => i);
    expectInvalid(
      () => translateWhere(schema, { $or: [{ count: { $in: values } }, { count: { $in: values } }, { count: { $in: values } }] }),
      /too large \(more than 2000/,
    );
    const wide: Record<string, unknown> = {};
    for (let i = 0; i < 2001; i++) wide[`f${i}`] = 1;
    expectInvalid(() => translateWhere(schema, wide), /too large/);
    const manyOr = { $or: Array.from({ length: 2001 }, () => ({ count: 1 })) };
    expectInvalid(() => translateWhere(schema, manyOr), /too large/);
    const bigJson = { document: Array.from({ length: 2001 }, (_, i) => i) };
    expectInvalid(() => translateWhere(schema, bigJson), /too large/);
  });

  it('refuses json values nested too deep', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = { a: deep };
    expectInvalid(() => translateWhere(schema, { document: { $eq: deep } }), /nested more than 8 levels/);
  });

  it('refuses strings over 1024 characters, without echoing them', () => {
    expect(where({ event_type: 'x'.repeat(1024) }).params).toEqual(['x'.repeat(1024)]);
    const error = expectInvalid(
      () => translateWhere(schema, { event_type: 'x'.repeat(1025) }),
      /value for "event_type" is longer than 1024 characters/,
    );
    expect(error.message).not.toContain('xxxxxxxxxx');
    expectInvalid(() => translateWhere(schema, { 'document.a': 'y'.repeat(2000) }), /longer than 1024/);
    expectInvalid(() => translateWhere(schema, { document: { ['k'.repeat(2000)]: 1 } }), /longer than 1024/);
    expectInvalid(() => translateWhere(schema, { permissions: { $in: ['z'.repeat(1025)] } }), /longer than 1024/);
  });

  it('checks path length, segment count and segment characters', () => {
    const ten = ['document', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].join('.');
    expect(where({ [ten]: 1 }).params[0]).toBe('{"a","b","c","d","e","f","g","h","i"}');
    expectInvalid(() => translateWhere(schema, { [`${ten}.j`]: 1 }), /has more than 10 segments/);
    expectInvalid(() => translateWhere(schema, { [`document.${'a'.repeat(65)}`]: 1 }), /is invalid: each part must be 1 to 64/);
    expectInvalid(() => translateWhere(schema, { 'document..a': 1 }), /is invalid/);
    expectInvalid(() => translateWhere(schema, { 'document.a b': 1 }), /is invalid/);
    expectInvalid(() => translateWhere(schema, { '': 1 }), /a field name is empty/);
    const huge = 'document.' + 'a'.repeat(100_000);
    const error = expectInvalid(() => translateWhere(schema, { [huge]: 1 }), /is too long/);
    expect(error.message.length).toBeLessThan(200);
  });

  it('refuses unknown fields, sub-fields of non-json fields and hidden fields', () => {
    expectInvalid(() => translateWhere(schema, { nope: 1 }), /unknown field "nope"/);
    expectInvalid(() => translateWhere(schema, { 'event_type.x': 'A' }), /field "event_type" has no sub-fields/);
    expectInvalid(() => translateWhere(schema, { password_hash: 'x' }), /field "password_hash" cannot be used in queries/);
    expectInvalid(() => translateWhere(schema, { 'password_hash.x': 'x' }), /"password_hash" cannot be used/);
    expectInvalid(() => translateWhere(schema, { $or: [{ count: 1 }, { secret_digest: { $exists: true } }] }), /"secret_digest"/);
    const unknown = expectInvalid(() => translateWhere(schema, { secret_digestx: 1 }), /unknown field/);
    expect(unknown.message).not.toContain('password_hash');
  });

  it.each([
    [{ event_type: 1 }, /field "event_type" expects a string, got a number$/],
    [{ event_type: { $in: ['a', 2] } }, /field "event_type" expects a string, got a number \(in \$in\)/],
    [{ event_type: ['a'] }, /got an array/],
    [{ event_type: { a: 1 } }, /got an object/],
    [{ count: 1.5 }, /expects an integer, got a number/],
    [{ count: '5' }, /expects an integer, got a string/],
    [{ count: 2 ** 60 }, /expects an integer/],
    [{ score: '2.5' }, /expects a number, got a string/],
    [{ is_active: 'true' }, /expects true or false, got a string/],
    [{ is_active: { $gt: false } }, /not supported on the boolean field/],
    [{ count: { $gt: null } }, /cannot compare with null/],
    [{ count: { $in: [1, null] } }, /cannot contain null/],
    [{ count: { $in: 1 } }, /\$in on "count" takes an array, got a number/],
    [{ count: { $exists: 1 } }, /\$exists on "count" takes true or false/],
  ])('refuses the wrongly typed %j', (filter, message) => {
    expectInvalid(() => translateWhere(schema, filter), message);
  });

  it('never echoes a huge operator name', () => {
    const error = expectInvalid(() => translateWhere(schema, { count: { [`$${'q'.repeat(5000)}`]: 1 } }), /not supported/);
    expect(error.message.length).toBeLessThan(250);
  });
});

describe('normalizeIsoTimestamp', () => {
  it.each<[string, string | undefined]>([
    // days that exist, and days that do not
    ['2000-02-29', '2000-02-29T00:00:00+00:00'],
    ['2024-02-29T23:59:59.999-0930', '2024-02-29T23:59:59.999-09:30'],
    ['1900-02-29', undefined],
    ['2026-04-31', undefined],
    // spellings of the time and its offset, up to nine fraction digits
    ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00+00:00'],
    ['2026-01-01t00:00:00z', '2026-01-01T00:00:00+00:00'],
    ['2026-01-01 12:30Z', '2026-01-01T12:30:00+00:00'],
    ['2026-01-01T00:00:00.5+01', '2026-01-01T00:00:00.5+01:00'],
    ['2026-01-01T00:00:00.1234567890Z', undefined],
    ['9'.repeat(1000), undefined],
  ])('%s -> %s', (input, output) => {
    expect(normalizeIsoTimestamp(input)).toBe(output);
  });
});

describe('translateSort', () => {
  const fallback = sql.raw('"id" desc');

  it('uses the fallback without a sort', () => {
    expect(render(translateSort(schema, undefined, fallback)).sql).toBe('"id" desc');
    expect(render(translateSort(schema, null, fallback)).sql).toBe('"id" desc');
  });

  it('sorts by a sortable field, with _id in the same direction as tie-breaker', () => {
    expect(render(translateSort(schema, 'event_time', fallback)).sql).toBe('"event_time" asc, "id" asc');
    expect(render(translateSort(schema, 'event_time asc', fallback)).sql).toBe('"event_time" asc, "id" asc');
    expect(render(translateSort(schema, 'event_time desc', fallback)).sql).toBe('"event_time" desc, "id" desc');
    expect(render(translateSort(schema, ' event_time   DESC ', fallback)).sql).toBe('"event_time" desc, "id" desc');
    expect(render(translateSort(schema, '_id desc', fallback)).sql).toBe('"id" desc');
    expect(render(translateSort(schema, 'sys.created_at desc', fallback))).toEqual({
      sql: '"created_at" desc, "id" desc',
      params: [],
    });
  });

  it('falls back to the given tie-breaker for a schema without _id', () => {
    const noId = { fields: { event_time: schema.fields.event_time } };
    expect(render(translateSort(noId, 'event_time asc', fallback)).sql).toBe('"event_time" asc, "id" desc');
  });

  it.each([
    ['event_time; drop', /unknown field "event_time;"/],
    ['event_time; drop table events', /sort: sort takes "field", "field asc" or "field desc"/],
    ['event_time sideways', /the direction must be "asc" or "desc", got "sideways"/],
    ['event_time desc, id', /sort takes/],
    ['count', /cannot sort by "count"; sortable fields: _id, event_type, event_time, sys.created_at/],
    ['document.sys.created_at', /cannot sort by "document.sys.created_at"/],
    ['document', /cannot sort by "document"/],
    ['password_hash', /"password_hash" cannot be used in queries/],
    ['secret_digest desc', /"secret_digest" cannot be used/],
    ['-event_time', /unknown field "-event_time"/],
    ['', /sort takes/],
    ['   ', /sort takes/],
    ['x'.repeat(5000), /is too long/],
  ])('refuses %j', (sort, message) => {
    expectInvalid(() => translateSort(schema, sort, fallback), message);
  });

  it('refuses a sort that is not a string', () => {
    expectInvalid(() => translateSort(schema, ['event_time', 'count'], fallback), /got an array/);
    expectInvalid(() => translateSort(schema, { event_time: 1 }, fallback), /got an object/);
  });
});

describe('parseSelect', () => {
  it.each([undefined, null, {}])('answers undefined for an absent or empty select: %p', (select) => {
    expect(parseSelect(schema, select)).toBeUndefined();
  });

  it('parses include and exclude projections', () => {
    expect(parseSelect(schema, { event_type: 1, 'document.username': true })).toEqual({
      mode: 'include',
      paths: [['event_type'], ['document', 'username']],
    });
    expect(parseSelect(schema, { document: 0, 'sys.created_at': false })).toEqual({
      mode: 'exclude',
      paths: [['document'], ['sys', 'created_at']],
    });
    expect(parseSelect(schema, { _id: 1 })).toEqual({ mode: 'include', paths: [['_id']] });
  });

  it.each([
    [{ event_type: 1, count: 0 }, /all 1 .* or all 0/],
    [{ event_type: 2 }, /the value for "event_type" must be 1 \(include\) or 0 \(exclude\)/],
    [{ event_type: '1' }, /must be 1/],
    [{ password_hash: 1 }, /"password_hash" cannot be used in queries/],
    [{ 'secret_digest.x': 0 }, /"secret_digest" cannot be used/],
    [{ nope: 1 }, /select: unknown field "nope"/],
    [{ 'event_type.x': 1 }, /has no sub-fields/],
    [{ 'document.a b': 1 }, /is invalid/],
  ])('refuses %j', (select, message) => {
    expectInvalid(() => parseSelect(schema, select), message);
  });

  it('refuses non-objects and oversized selects', () => {
    expectInvalid(() => parseSelect(schema, ['event_type']), /must be a JSON object/);
    expectInvalid(() => parseSelect(schema, 'event_type'), /must be a JSON object/);
    const many: Record<string, number> = {};
    for (let i = 0; i < 101; i++) many[`document.f${i}`] = 1;
    expectInvalid(() => parseSelect(schema, many), /more than 100 fields/);
  });
});

describe('applyProjection', () => {
  const doc = {
    _id: 'e1',
    event_type: 'UserCreated',
    count: 3,
    document: { username: 'alice', sys: { created_by: 'system', created_at: 'x' }, tags: [{ a: 1, b: 2 }, 7] },
    sys: { created_at: '2026-01-01T00:00:00.000Z', created_by: 'system' },
  };

  it('returns the document as is without a projection', () => {
    expect(applyProjection(doc, undefined)).toBe(doc);
  });

  it('includes the named fields and always _id', () => {
    expect(applyProjection(doc, { mode: 'include', paths: [['event_type']] })).toEqual({
      _id: 'e1',
      event_type: 'UserCreated',
    });
  });

  it('projects dotted paths into nested objects and arrays', () => {
    const projection = parseSelect(schema, { 'document.username': 1, 'document.sys.created_by': 1, 'sys.created_at': 1 });
    expect(applyProjection(doc, projection)).toEqual({
      _id: 'e1',
      document: { username: 'alice', sys: { created_by: 'system' } },
      sys: { created_at: '2026-01-01T00:00:00.000Z' },
    });
    expect(applyProjection(doc, { mode: 'include', paths: [['document', 'tags', 'a']] })).toEqual({
      _id: 'e1',
      document: { tags: [{ a: 1 }] },
    });
  });

  it('lets a whole field win over a path below it, and skips missing paths', () => {
    expect(
      applyProjection(doc, {
        mode: 'include',
        paths: [['document', 'username'], ['document'], ['missing', 'x'], ['count', 'x']],
      }),
    ).toEqual({ _id: 'e1', document: doc.document });
  });

  it('excludes fields and nested paths without changing the input', () => {
    const before = JSON.stringify(doc);
    expect(applyProjection(doc, { mode: 'exclude', paths: [['document', 'sys'], ['count'], ['document', 'tags', 'b']] })).toEqual({
      _id: 'e1',
      event_type: 'UserCreated',
      document: { username: 'alice', tags: [{ a: 1 }, 7] },
      sys: doc.sys,
    });
    expect(JSON.stringify(doc)).toBe(before);
  });

  it('cannot be used to reach or change a prototype', () => {
    const hostile: Record<string, unknown> = JSON.parse('{"_id":"1","document":{"__proto__":{"polluted":true},"a":1}}');
    const out = applyProjection(hostile, { mode: 'include', paths: [['document', '__proto__']] });
    expect(Object.getPrototypeOf(out.document)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(out.document as object)).toEqual(['__proto__']);
    const inherited = applyProjection({ _id: '1', document: { a: 1 } }, { mode: 'include', paths: [['document', 'constructor']] });
    expect(inherited).toEqual({ _id: '1', document: {} });
  });
});

describe('parseListParams', () => {
  it('applies the defaults', () => {
    expect(parseListParams({})).toEqual({ skip: 0, limit: 100, withCount: false });
  });

  it('reads strings, numbers and booleans', () => {
    expect(parseListParams({ skip: '20', limit: '1000', with_count: 'true', sort: 'event_time desc' })).toEqual({
      skip: 20,
      limit: 1000,
      withCount: true,
      sort: 'event_time desc',
    });
    expect(parseListParams({ skip: 1_000_000, limit: 1, with_count: false, other: 'x' })).toEqual({
      skip: 1_000_000,
      limit: 1,
      withCount: false,
    });
    expect(parseListParams({ with_count: true, skip: '007' })).toEqual({ skip: 7, limit: 100, withCount: true });
  });

  it.each([
    [{ skip: '-1' }, 'skip: must be an integer from 0 to 1000000'],
    [{ skip: '1000001' }, 'skip: must be an integer from 0 to 1000000'],
    [{ skip: 'abc' }, 'skip: must be'],
    [{ skip: '' }, 'skip: must be'],
    [{ skip: ['1', '2'] }, 'skip: must be'],
    [{ skip: 1.5 }, 'skip: must be'],
    [{ limit: '0' }, 'limit: must be an integer from 1 to 1000'],
    [{ limit: '1001' }, 'limit: must be an integer from 1 to 1000'],
    [{ limit: '1e3' }, 'limit: must be'],
    [{ limit: '10.0' }, 'limit: must be'],
    [{ limit: ' 10' }, 'limit: must be'],
    [{ limit: '+10' }, 'limit: must be'],
    [{ limit: '9'.repeat(10_000) }, 'limit: must be'],
    [{ with_count: 'yes' }, 'with_count: must be true or false'],
    [{ with_count: '1' }, 'with_count: must be true or false'],
    [{ with_count: ['true'] }, 'with_count: must be true or false'],
    [{ sort: ['a', 'b'] }, 'sort: must be one string'],
  ])('refuses %j', (query, message) => {
    const error = expectInvalid(() => parseListParams(query), message);
    expect(error.message.startsWith(message)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Semantics against a real PostgreSQL (PGlite).

/**
 * The fixture table, a line a column: its SQL type and, where it can be queried, its field. The
 * CREATE TABLE and the query schema are both built from it, so the two cannot disagree.
 */
const ITEM_COLUMNS: Record<string, { sqlType: string; field?: string; type?: FieldType; sortable?: boolean }> = {
  id: { sqlType: 'text primary key', field: '_id', type: 'string', sortable: true },
  membership_id: { sqlType: 'text not null' },
  name: { sqlType: 'text', field: 'name', type: 'string', sortable: true },
  age: { sqlType: 'integer', field: 'age', type: 'integer', sortable: true },
  score: { sqlType: 'double precision', field: 'score', type: 'number' },
  active: { sqlType: 'boolean', field: 'active', type: 'boolean' },
  created_at: { sqlType: 'timestamptz', field: 'sys.created_at', type: 'timestamp', sortable: true },
  doc: { sqlType: 'jsonb', field: 'document', type: 'json' },
  perms: { sqlType: 'jsonb', field: 'permissions', type: 'string_array' },
};

const itemSchema: QuerySchema = {
  fields: Object.fromEntries(
    Object.entries(ITEM_COLUMNS).flatMap(([column, { field, type, sortable }]) => (field && type ? [[field, { sql: sql`${sql.identifier(column)}`, type, sortable }]] : [])),
  ),
  hidden: ['password_hash'],
};

describe('translation semantics on PGlite', () => {
  let client: PGlite;
  let db: ReturnType<typeof drizzle>;

  beforeAll(async () => {
    client = new PGlite();
    db = drizzle(client);
    await client.exec(`
      create table items (${Object.entries(ITEM_COLUMNS).map(([column, { sqlType }]) => `${column} ${sqlType}`).join(', ')});
      insert into items values
        ('a', 'm1', 'alice', 30, 1.5, true, '2026-01-01T00:00:00Z',
          '{"username":"alice","n":1,"sys":{"created_by":"system"},"tags":["x","y"],"flag":true}', '["users:read","roles:read"]'),
        ('b', 'm1', 'bob', 25, 2.5, false, '2026-02-01T12:00:00Z',
          '{"username":"bob","n":"1","sys":{"created_by":"u1"}}', '["users:write"]'),
        ('c', 'm1', null, null, null, null, null,
          '{"username":"carol","n":2,"flag":null}', null),
        ('d', 'm1', 'dave', 40, -1, true, '2025-12-31T23:59:59.999Z', null, '[]'),
        ('e', 'm1', 'Eve', 2000000000, 1e10, false, '2026-01-01T00:00:00.000001Z',
          '{"username":"eve","n":10,"sys":{"created_by":"system","tags":[]}}', '["roles:read"]'),
        ('z', 'm2', 'alice', 30, 1.5, true, '2026-01-01T00:00:00Z',
          '{"username":"alice","n":1}', '["users:read"]');
    `);
  });

  afterAll(async () => {
    await client.close();
  });

  async function ids(filter: unknown, membership = 'm1'): Promise<string[]> {
    const { rows } = await db.execute<{ id: string }>(sql`select id from items where ${and(sql`membership_id = ${membership}`, translateWhere(itemSchema, filter))} order by id`);
    return rows.map((row) => row.id);
  }

  it.each<[string, unknown, string[]]>([
    ['no filter', {}, ['a', 'b', 'c', 'd', 'e']],
    ['implicit equality', { name: 'alice' }, ['a']],
    ['$eq', { age: { $eq: 25 } }, ['b']],
    ['equality with null', { name: null }, ['c']],
    ['$ne matches NULL too', { name: { $ne: 'alice' } }, ['b', 'c', 'd', 'e']],
    ['$ne null', { name: { $ne: null } }, ['a', 'b', 'd', 'e']],
    ['$ne on a boolean matches NULL', { active: { $ne: true } }, ['b', 'c', 'e']],
    ['$in', { name: { $in: ['alice', 'dave', 'nobody'] } }, ['a', 'd']],
    ['$nin matches NULL too', { name: { $nin: ['alice', 'dave'] } }, ['b', 'c', 'e']],
    ['$in empty', { name: { $in: [] } }, []],
    ['$nin empty', { name: { $nin: [] } }, ['a', 'b', 'c', 'd', 'e']],
    ['$gt on integers', { age: { $gt: 25 } }, ['a', 'd', 'e']],
    ['$gte and $lte together', { age: { $gte: 25, $lte: 30 } }, ['a', 'b']],
    ['$lt', { age: { $lt: 30 } }, ['b']],
    ['an integer beyond int4 does not fail', { age: { $lt: 5_000_000_000 } }, ['a', 'b', 'd', 'e']],
    ['numbers compare as numbers', { score: { $gt: 2 } }, ['b', 'e']],
    ['number equality', { score: 1.5 }, ['a']],
    ['booleans', { active: false }, ['b', 'e']],
    ['$exists true', { age: { $exists: true } }, ['a', 'b', 'd', 'e']],
    ['$exists false', { age: { $exists: false } }, ['c']],
    ['timestamp range', { 'sys.created_at': { $gte: '2026-01-01T00:00:00Z', $lt: '2026-02-01' } }, ['a', 'e']],
    ['timestamp with an offset', { 'sys.created_at': { $eq: '2026-01-01T01:00:00+01:00' } }, ['a']],
    ['timestamp microseconds', { 'sys.created_at': { $gt: '2026-01-01T00:00:00.000000Z' } }, ['b', 'e']],
    ['timestamp $in', { 'sys.created_at': { $in: ['2026-02-01T12:00:00Z', '2025-12-31T23:59:59.999Z'] } }, ['b', 'd']],
    ['timestamp $ne matches NULL', { 'sys.created_at': { $ne: '2026-01-01' } }, ['b', 'c', 'd', 'e']],
    ['json number', { 'document.n': 1 }, ['a']],
    ['json string is not a number', { 'document.n': '1' }, ['b']],
    ['json $in keeps types', { 'document.n': { $in: [2, '1'] } }, ['b', 'c']],
    ['json $nin matches missing', { 'document.n': { $nin: [1, 2] } }, ['b', 'd', 'e']],
    ['json $ne matches missing', { 'document.n': { $ne: 1 } }, ['b', 'c', 'd', 'e']],
    ['json ordering on numbers only', { 'document.n': { $gte: 2 } }, ['c', 'e']],
    ['json ordering on strings only', { 'document.username': { $lt: 'c' } }, ['a', 'b']],
    ['json $gt does not match other types', { 'document.flag': { $gt: 0 } }, []],
    ['dotted path', { 'document.sys.created_by': 'system' }, ['a', 'e']],
    ['array element by index', { 'document.tags.1': 'y' }, ['a']],
    ['json object equality', { 'document.sys': { created_by: 'u1' } }, ['b']],
    ['json array equality', { 'document.tags': ['x', 'y'] }, ['a']],
    ['json null matches JSON null and missing', { 'document.flag': null }, ['b', 'c', 'd', 'e']],
    ['json $ne null', { 'document.flag': { $ne: null } }, ['a']],
    ['json $exists counts JSON null as present', { 'document.flag': { $exists: true } }, ['a', 'c']],
    ['json $exists false on a path', { 'document.sys': { $exists: false } }, ['c', 'd']],
    ['whole json column $exists', { document: { $exists: false } }, ['d']],
    ['string_array contains', { permissions: 'users:read' }, ['a']],
    ['string_array $in', { permissions: { $in: ['users:write', 'roles:read'] } }, ['a', 'b', 'e']],
    ['string_array $nin matches NULL and empty', { permissions: { $nin: ['users:read', 'users:write'] } }, ['c', 'd', 'e']],
    ['string_array $ne', { permissions: { $ne: 'roles:read' } }, ['b', 'c', 'd']],
    ['string_array null', { permissions: null }, ['c']],
    ['$or', { $or: [{ name: 'alice' }, { age: { $gte: 40 } }] }, ['a', 'd', 'e']],
    ['$and', { $and: [{ active: true }, { age: { $gt: 30 } }] }, ['d']],
    [
      'nested $and/$or',
      { $or: [{ $and: [{ active: true }, { 'document.n': 1 }] }, { $and: [{ active: false }, { score: { $gt: 100 } }] }] },
      ['a', 'e'],
    ],
    ['several fields are AND', { active: true, name: { $ne: 'dave' } }, ['a']],
    ['SQL in a value is only a value', { name: "alice' or '1'='1" }, []],
  ])('%s', async (_label, filter, expected) => {
    expect(await ids(filter)).toEqual(expected);
  });

  it('cannot widen the membership condition with $or', async () => {
    expect(await ids({ $or: [{ name: 'alice' }, { _id: 'z' }] })).toEqual(['a']);
    expect(await ids({ $or: [{ name: 'alice' }, { _id: 'a' }] }, 'm2')).toEqual(['z']);
  });

  it('runs a 1000-value $in', async () => {
    const values = Array.from({ length: 999 }, (_, i) => `n${i}`);
    expect(await ids({ name: { $in: [...values, 'bob'] } })).toEqual(['b']);
    expect(await ids({ permissions: { $in: [...values, 'users:write'] } })).toEqual(['b']);
  });

  it('sorts by a sortable field with the fallback as tie-breaker', async () => {
    const order = async (sort: unknown): Promise<string[]> => {
      const { rows } = await db.execute<{ id: string }>(sql`select id from items where membership_id = 'm1' order by ${translateSort(itemSchema, sort, sql`id desc`)}`);
      return rows.map((row) => row.id);
    };
    expect(await order(undefined)).toEqual(['e', 'd', 'c', 'b', 'a']);
    expect(await order('age')).toEqual(['b', 'a', 'd', 'e', 'c']);
    expect(await order('age desc')).toEqual(['c', 'e', 'd', 'a', 'b']);
    expect(await order('sys.created_at asc')).toEqual(['d', 'a', 'e', 'b', 'c']);
  });
});

describe('whereReadsUnindexed', () => {
  it('is true when any condition, at any depth, compares a json path or a field that is not sortable', () => {
    expect(whereReadsUnindexed(schema, { 'document.user.name': 'x' })).toBe(true);
    expect(whereReadsUnindexed(schema, { count: { $gt: 1 } })).toBe(true);
    expect(whereReadsUnindexed(schema, { event_type: 'A', $or: [{ _id: 'x' }, { $and: [{ is_active: true }] }] })).toBe(true);
  });

  it('is false for sortable (indexed) fields only, and for no filter', () => {
    expect(whereReadsUnindexed(schema, { event_type: { $in: ['A', 'B'] }, event_time: { $gte: '2026-01-01T00:00:00Z' } })).toBe(false);
    expect(whereReadsUnindexed(schema, { $or: [{ _id: 'x' }, { 'sys.created_at': { $lt: '2026-01-01T00:00:00Z' } }] })).toBe(false);
    expect(whereReadsUnindexed(schema, undefined)).toBe(false);
    expect(whereReadsUnindexed(schema, {})).toBe(false);
  });
});
