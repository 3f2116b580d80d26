import { membershipScopedKey, ReadThroughCache, type ReadThroughCacheOptions, RowCache, type RowCacheLifetimes } from './read-through-cache';

/** The base class opened for the test: a key is looked up by the loader the test gives. */
class TestCache extends ReadThroughCache<string> {
  constructor(options: ReadThroughCacheOptions) {
    super(options);
  }

  get(key: string, load: () => Promise<string | undefined>): Promise<string | undefined> {
    return this.read(key, load);
  }

  forget(key: string): void {
    this.forgetKey(key);
  }

  forgetMembership(membershipId: string): void {
    this.forgetMembershipScoped(membershipId);
  }
}

/** A row cache as the services' caches make one: sized by the configuration. */
class TestRowCache extends RowCache<string> {
  constructor(cacheMaxEntries: number, lifetimes?: RowCacheLifetimes) {
    super({ cacheMaxEntries }, lifetimes);
  }

  get(key: string, load: () => Promise<string | undefined>): Promise<string | undefined> {
    return this.read(key, load);
  }
}

describe('ReadThroughCache', () => {
  afterEach(() => jest.useRealTimers());

  /** A lookup that counts its calls and finds only the keys of `rows`. */
  function lookup(rows: Record<string, string>): { load: (key: string) => () => Promise<string | undefined>; calls: () => number } {
    let calls = 0;
    return {
      load: (key) => async () => {
        calls += 1;
        return rows[key];
      },
      calls: () => calls,
    };
  }

  it('looks a key up once, then answers hits and misses from memory', async () => {
    const cache = new TestCache({ maxEntries: 10, ttlMs: 60_000 });
    const rows = lookup({ a: 'row a' });
    expect(await cache.get('a', rows.load('a'))).toBe('row a');
    expect(await cache.get('a', rows.load('a'))).toBe('row a');
    expect(await cache.get('missing', rows.load('missing'))).toBeUndefined();
    expect(await cache.get('missing', rows.load('missing'))).toBeUndefined();
    expect(rows.calls()).toBe(2);
    expect(cache.size).toBe(2);
    cache.onModuleDestroy();
  });

  it('remembers a miss only for missTtlMs, a hit for ttlMs', async () => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') });
    const cache = new TestCache({ maxEntries: 10, ttlMs: 60_000, missTtlMs: 1_000 });
    const rows = lookup({ a: 'row a' });
    await cache.get('a', rows.load('a'));
    await cache.get('b', rows.load('b'));
    jest.setSystemTime(Date.now() + 2_000);
    await cache.get('a', rows.load('a'));
    await cache.get('b', rows.load('b'));
    expect(rows.calls()).toBe(3);
    cache.onModuleDestroy();
  });

  it('looks a forgotten key up again', async () => {
    const cache = new TestCache({ maxEntries: 10, ttlMs: 60_000 });
    const rows = lookup({ a: 'row a' });
    await cache.get('a', rows.load('a'));
    cache.forget('a');
    await cache.get('a', rows.load('a'));
    expect(rows.calls()).toBe(2);
    cache.onModuleDestroy();
  });

  it('RowCache: keeps a row for the hour the specification allows and a miss for 10 s, unless it states its own lifetimes', async () => {
    jest.useFakeTimers({ now: new Date('2026-01-01T00:00:00.000Z') });
    const cache = new TestRowCache(10);
    const own = new TestRowCache(10, { ttlMs: 1_000 });
    const rows = lookup({ a: 'row a' });
    for (const c of [cache, own]) {
      await c.get('a', rows.load('a'));
      await c.get('b', rows.load('b'));
    }
    expect(rows.calls()).toBe(4);
    jest.setSystemTime(Date.now() + 11_000);
    for (const c of [cache, own]) {
      await c.get('a', rows.load('a'));
      await c.get('b', rows.load('b'));
    }
    // The default keeps the hit and drops the miss; 1 s lifetimes drop both.
    expect(rows.calls()).toBe(7);
    jest.setSystemTime(Date.now() + 60 * 60 * 1000);
    await cache.get('a', rows.load('a'));
    expect(rows.calls()).toBe(8);
    cache.onModuleDestroy();
    own.onModuleDestroy();
  });

  it('RowCache: holds at most CACHE_MAX_ENTRIES entries', async () => {
    const cache = new TestRowCache(2);
    const rows = lookup({ a: 'row a', b: 'row b', c: 'row c' });
    for (const key of ['a', 'b', 'c']) await cache.get(key, rows.load(key));
    expect(cache.size).toBe(2);
    cache.onModuleDestroy();
  });

  it("forgets one membership's rows (and only those), or everything", async () => {
    const cache = new TestCache({ maxEntries: 10, ttlMs: 60_000 });
    const keys = [membershipScopedKey('m1', 'a'), membershipScopedKey('m1', 'b'), membershipScopedKey('m10', 'a'), membershipScopedKey('m2', 'a')];
    const rows = lookup(Object.fromEntries(keys.map((key) => [key, `row ${key}`])));
    for (const key of keys) await cache.get(key, rows.load(key));
    cache.forgetMembership('m1');
    expect(cache.size).toBe(2);
    for (const key of keys) await cache.get(key, rows.load(key));
    expect(rows.calls()).toBe(6);
    cache.forgetAll();
    expect(cache.size).toBe(0);
    cache.onModuleDestroy();
  });

  it('does not keep what a load read while a forget happened (it may predate the change)', async () => {
    const cache = new TestCache({ maxEntries: 10, ttlMs: 60_000 });
    let release: (value: string) => void = () => undefined;
    const pending = cache.get('k', () => new Promise<string>((resolve) => (release = resolve)));
    cache.forgetAll();
    release('old row');
    expect(await pending).toBe('old row');
    expect(await cache.get('k', async () => 'new row')).toBe('new row');
    expect(await cache.get('k', async () => 'not asked')).toBe('new row');
    cache.onModuleDestroy();
  });

  it('keys a slug by its membership', () => {
    expect(membershipScopedKey('m1', 'admin')).not.toBe(membershipScopedKey('m2', 'admin'));
  });
});
