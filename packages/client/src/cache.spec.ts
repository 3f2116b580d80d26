import { type Lookup, LookupTable, TtlCache } from './cache';

describe('TtlCache', () => {
  it('expires entries a fixed time after insertion, hits do not extend them', () => {
    let now = 1000;
    const cache = new TtlCache<string>(100, 10, () => now);
    cache.set('a', 'A');
    now = 1050;
    expect(cache.get('a')).toBe('A');
    now = 1099;
    expect(cache.get('a')).toBe('A');
    now = 1100;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('is bounded: the oldest entry goes first', () => {
    const cache = new TtlCache<number>(60_000, 3);
    for (let i = 0; i < 5; i += 1) cache.set(`k${i}`, i);
    expect(cache.size).toBe(3);
    expect(cache.keys()).toEqual(['k2', 'k3', 'k4']);
    cache.set('k2', 22);
    expect(cache.keys()).toEqual(['k3', 'k4', 'k2']);
  });

  it('stays bounded under many inserts', () => {
    const cache = new TtlCache<number>(60_000, 10_000);
    for (let i = 0; i < 25_000; i += 1) cache.set(String(i), i);
    expect(cache.size).toBe(10_000);
    expect(cache.get('24999')).toBe(24999);
    expect(cache.get('0')).toBeUndefined();
  });
});

describe('LookupTable', () => {
  function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
    let resolve!: (value: T) => void;
    const promise = new Promise<T>((r) => { resolve = r; });
    return { promise, resolve };
  }

  it('shares one pending lookup between identical concurrent callers and forgets it once settled', async () => {
    const table = new LookupTable<string, string>();
    const gate = deferred<Lookup<string, string>>();
    let calls = 0;
    const fetch = (): Promise<Lookup<string, string>> => { calls += 1; return gate.promise; };
    const all = Promise.all([table.run('k', false, fetch), table.run('k', false, fetch), table.run('k', false, fetch)]);
    const other = table.run('other', false, async () => { calls += 1; return { ok: true, value: 'o' }; });
    expect(table.pending).toBe(2);
    gate.resolve({ ok: true, value: 'v' });
    expect(await all).toEqual([{ ok: true, value: 'v' }, { ok: true, value: 'v' }, { ok: true, value: 'v' }]);
    await other;
    expect(calls).toBe(2);
    expect(table.pending).toBe(0);
    await table.run('k', false, async () => { calls += 1; return { ok: true, value: 'again' }; });
    expect(calls).toBe(3);
  });

  it('shares a pending lookup only within its epoch: a caller of a later epoch gets a call of its own', async () => {
    const table = new LookupTable<string, string>();
    const before = deferred<Lookup<string, string>>();
    const after = deferred<Lookup<string, string>>();
    const early = table.run('k', false, () => before.promise, 1);
    const joined = table.run('k', false, () => Promise.reject(new Error('joins the epoch-1 call')), 1);
    const late = table.run('k', false, () => after.promise, 2);
    const lateJoined = table.run('k', false, () => Promise.reject(new Error('joins the epoch-2 call')), 2);
    before.resolve({ ok: true, value: 'asked before' });
    after.resolve({ ok: true, value: 'asked after' });
    expect(await Promise.all([early, joined, late, lateJoined])).toEqual([
      { ok: true, value: 'asked before' },
      { ok: true, value: 'asked before' },
      { ok: true, value: 'asked after' },
      { ok: true, value: 'asked after' },
    ]);
    expect(table.pending).toBe(0);
  });

  it("an older epoch's lookup settling does not forget the newer one of the same key", async () => {
    const table = new LookupTable<string, string>();
    const newer = deferred<Lookup<string, string>>();
    const older = deferred<Lookup<string, string>>();
    const old = table.run('k', false, () => older.promise, 1);
    void table.run('k', false, () => newer.promise, 2);
    older.resolve({ ok: true, value: 'old' });
    await old;
    expect(table.pending).toBe(1);
    const joined = table.run('k', false, () => Promise.reject(new Error('joins the pending call')), 2);
    newer.resolve({ ok: true, value: 'new' });
    expect(await joined).toEqual({ ok: true, value: 'new' });
  });

  it('forgets a pending lookup that rejected', async () => {
    const table = new LookupTable<string, string>();
    await expect(table.run('k', false, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(table.pending).toBe(0);
  });

  it('caches successes only, and only when asked to', async () => {
    const table = new LookupTable<string, string>(new TtlCache<string>(60_000));
    let calls = 0;
    const failing = async (): Promise<Lookup<string, string>> => { calls += 1; return { ok: false, failure: 'no' }; };
    await table.run('f', true, failing);
    await table.run('f', true, failing);
    expect(calls).toBe(2);
    const succeeding = async (): Promise<Lookup<string, string>> => { calls += 1; return { ok: true, value: 'yes' }; };
    await table.run('s', true, succeeding);
    await table.run('s', true, succeeding);
    expect(calls).toBe(3);
    await table.run('n', false, succeeding);
    await table.run('n', false, succeeding);
    expect(calls).toBe(5);
  });

  it('clearCache forgets every kept result, and a lookup under way when it ran keeps nothing', async () => {
    const table = new LookupTable<string, string>(new TtlCache<string>(60_000));
    let calls = 0;
    const answer = deferred<Lookup<string, string>>();
    const slow = (): Promise<Lookup<string, string>> => { calls += 1; return answer.promise; };
    const quick = async (): Promise<Lookup<string, string>> => { calls += 1; return { ok: true, value: 'new' }; };
    await table.run('kept', true, quick);
    const underWay = table.run('late', true, slow);
    table.clearCache();
    answer.resolve({ ok: true, value: 'old' });
    expect(await underWay).toEqual({ ok: true, value: 'old' });
    // Neither the result kept before the clear nor the one fetched across it is served.
    await table.run('kept', true, quick);
    await table.run('late', true, quick);
    expect(calls).toBe(4);
    // What is fetched after the clear is kept again.
    await table.run('late', true, quick);
    expect(calls).toBe(4);
  });
});
