import { retryDelayMs } from './webhook-dispatcher';

describe('retryDelayMs', () => {
  it('doubles per failed attempt from the base, exactly at the middle of the jitter', () => {
    expect([1, 2, 3, 4].map((finished) => retryDelayMs(1000, finished, () => 0.5))).toEqual([1000, 2000, 4000, 8000]);
  });

  it('stays within ±20% of the doubled wait', () => {
    expect(retryDelayMs(1000, 3, () => 0)).toBe(3200);
    expect(retryDelayMs(1000, 3, () => 0.999999)).toBe(4800);
  });

  it('never waits more than 60 s', () => {
    expect(retryDelayMs(1000, 20, () => 0.999999)).toBe(60_000);
    expect(retryDelayMs(60_000, 1, () => 0.999999)).toBe(60_000);
  });
});
