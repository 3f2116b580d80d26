import { sameJson } from './same-json';

describe('sameJson', () => {
  it.each([
    [{ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }],
    [['x', 'y'], ['x', 'y']],
    [{ a: 1, b: undefined }, { a: 1 }],
    [null, null],
    ['s', 's'],
  ])('equal: %j and %j', (a, b) => {
    expect(sameJson(a, b)).toBe(true);
    expect(sameJson(b, a)).toBe(true);
  });

  it.each([
    [['x', 'y'], ['y', 'x']],
    [{ a: 1 }, { a: '1' }],
    [{ a: 1 }, { a: 1, b: null }],
    [{ a: [] }, { a: {} }],
    [[1], [1, 2]],
    [null, {}],
    [0, false],
  ])('different: %j and %j', (a, b) => {
    expect(sameJson(a, b)).toBe(false);
    expect(sameJson(b, a)).toBe(false);
  });
});
