import { jsonBudgetProblem, JSON_BODY_LIMITS, type JsonBudgetLimits } from './json-budget';

const scan = (text: string, limits: JsonBudgetLimits = JSON_BODY_LIMITS) => jsonBudgetProblem(Buffer.from(text, 'utf8'), limits);
const keys = (count: number): string => `{${Array.from({ length: count }, (_, i) => `"k${i}":1`).join(',')}}`;
const depth = (levels: number): string => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('jsonBudgetProblem', () => {
  it('lets exactly 1000 keys and depth 32 through, and stops at one more', () => {
    expect(scan(keys(1000))).toBeNull();
    expect(scan(keys(1001))).toEqual({ field: 'request.body', message: 'must have at most 1000 keys in all' });
    expect(scan(depth(32))).toBeNull();
    expect(scan(depth(33))).toEqual({ field: 'request.body', message: 'must be nested at most 32 levels deep' });
  });

  it('counts keys of every object, nested ones included, and the elements of every array apart from them', () => {
    expect(scan('{"a":{"b":1,"c":[{"d":2}]}}', { maxKeys: 4, maxElements: 1, maxDepth: 32 })).toBeNull();
    expect(scan('{"a":{"b":1,"c":[{"d":2}]},"e":3}', { maxKeys: 4, maxElements: 1, maxDepth: 32 })).toEqual({
      field: 'request.body',
      message: 'must have at most 4 keys in all',
    });
    expect(scan('{"a":{"b":1,"c":[{"d":2},3]}}', { maxKeys: 4, maxElements: 1, maxDepth: 32 })).toEqual({
      field: 'request.body',
      message: 'must have at most 1 array elements in all',
    });
  });

  it('lets the largest list the contract allows (1000 ids, 1000 $in values) through beside its keys', () => {
    const list = (count: number): string[] => Array.from({ length: count }, (_, i) => `id${i}`);
    expect(scan(JSON.stringify({ ids: list(1000) }))).toBeNull();
    expect(scan(JSON.stringify({ where: { username: { $in: list(1000) } }, select: ['username'] }))).toBeNull();
    expect(scan(JSON.stringify({ where: { username: { $in: list(1001) } }, a: list(999) }))).toBeNull();
    expect(scan(JSON.stringify({ ids: list(2001) }))).toEqual({ field: 'request.body', message: 'must have at most 2000 array elements in all' });
  });

  it('counts array elements, top-level ones included, and not the commas between keys', () => {
    const zeros = (count: number): string => `[${Array.from({ length: count }, () => '0').join(',')}]`;
    expect(scan(zeros(2000))).toBeNull();
    expect(scan(zeros(2001))).toEqual({ field: 'request.body', message: 'must have at most 2000 array elements in all' });
    expect(scan(' [ ] ', { maxKeys: 0, maxElements: 0, maxDepth: 2 })).toBeNull();
    expect(scan('[ "a" ]', { maxKeys: 0, maxElements: 0, maxDepth: 2 })).not.toBeNull();
    expect(scan('[[],{}]', { maxKeys: 0, maxElements: 2, maxDepth: 2 })).toBeNull();
    expect(scan('[[0],{}]', { maxKeys: 0, maxElements: 2, maxDepth: 2 })).not.toBeNull();
    expect(scan('{"a":1,"b":2,"c":"x,y"}', { maxKeys: 3, maxElements: 0, maxDepth: 2 })).toBeNull();
  });

  it('sees depth again after a level closes', () => {
    expect(scan('[[[]],[[]],[[]]]', { maxKeys: 10, maxElements: 10, maxDepth: 3 })).toBeNull();
    expect(scan('[[[[]]]]', { maxKeys: 10, maxElements: 10, maxDepth: 3 })).not.toBeNull();
  });

  it('ignores colons, braces and brackets inside strings, escaped quotes included', () => {
    expect(scan(JSON.stringify({ a: '"x":{[[{"y":1' }), { maxKeys: 1, maxElements: 0, maxDepth: 1 })).toBeNull();
    expect(scan(JSON.stringify({ a: 'ends in a backslash \\', b: 1 }), { maxKeys: 1, maxElements: 0, maxDepth: 1 })).not.toBeNull();
  });

  it('is not confused by multi-byte UTF-8 characters', () => {
    expect(scan(JSON.stringify({ 'ключ': 'значение: {[', '鍵': '値' }), { maxKeys: 2, maxElements: 0, maxDepth: 1 })).toBeNull();
  });
});
