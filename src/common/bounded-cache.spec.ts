import { BoundedCache, CACHE_PURGE_INTERVAL_MS } from './bounded-cache';

describe('BoundedCache', () => {
  afterEach(() => jest.useRealTimers());

  it('never holds more than maxEntries, dropping the least recently used first', () => {
    const cache = new BoundedCache<string>({ maxEntries: 3, ttlMs: 60_000 });
    for (const key of ['a', 'b', 'c']) cache.set(key, key);
    cache.get('a');
    cache.set('d', 'd');
    expect(cache.size).toBe(3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe('a');
    for (let i = 0; i < 1000; i++) cache.set(`k${i}`, 'v');
    expect(cache.size).toBe(3);
    cache.close();
  });

  it('drops expired entries on its own, without being read', () => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') });
    const cache = new BoundedCache<string>({ maxEntries: 100, ttlMs: 60_000 });
    cache.set('short', 'v', 1_000);
    cache.set('long', 'v');
    expect(cache.size).toBe(2);
    jest.advanceTimersByTime(CACHE_PURGE_INTERVAL_MS);
    expect(cache.size).toBe(1);
    jest.advanceTimersByTime(60_000);
    expect(cache.size).toBe(0);
    cache.close();
  });

  it('reads expiry from Date.now, so a moved clock expires entries', () => {
    const realNow = Date.now();
    const cache = new BoundedCache<string>({ maxEntries: 10, ttlMs: 1_000 });
    cache.set('a', 'v');
    const spy = jest.spyOn(Date, 'now').mockImplementation(() => realNow + 5_000);
    try {
      expect(cache.get('a')).toBeUndefined();
    } finally {
      spy.mockRestore();
      cache.close();
    }
  });
});
