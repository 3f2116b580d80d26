import { HookListCache } from './event-triggered-delivery';

describe('HookListCache', () => {
  let lookups: number;
  let answer: () => Promise<string[]>;
  const make = () =>
    new HookListCache<string>({
      maxEntries: 10,
      ttlMs: 1_000,
      findActiveFor: () => {
        lookups += 1;
        return answer();
      },
    });

  beforeEach(() => {
    lookups = 0;
    answer = () => Promise.resolve([]);
  });
  afterEach(() => jest.useRealTimers());

  it('knows a list only once its lookup has answered, and one lookup serves the burst', async () => {
    const cache = make();
    expect(cache.knownFor('mbr_1', 'UserCreated')).toBeUndefined();
    answer = () => Promise.resolve(['hook_1']);
    const pending = cache.activeFor('mbr_1', 'UserCreated');
    expect(cache.knownFor('mbr_1', 'UserCreated')).toBeUndefined();
    expect(cache.activeFor('mbr_1', 'UserCreated')).toBe(pending);
    await pending;
    expect(cache.knownFor('mbr_1', 'UserCreated')).toEqual(['hook_1']);
    expect(cache.knownFor('mbr_1', 'UserDeleted')).toBeUndefined();
    expect(cache.knownFor('mbr_2', 'UserCreated')).toBeUndefined();
    expect(lookups).toBe(1);
    cache.close();
  });

  it('knows an empty list (the common case) and forgets it when it expires or is invalidated', async () => {
    jest.useFakeTimers({ now: Date.now(), doNotFake: ['setInterval', 'setTimeout'] });
    const cache = make();
    await cache.activeFor('mbr_1', 'TokenVerified');
    expect(cache.knownFor('mbr_1', 'TokenVerified')).toEqual([]);
    jest.setSystemTime(Date.now() + 1_001);
    expect(cache.knownFor('mbr_1', 'TokenVerified')).toBeUndefined();
    await cache.activeFor('mbr_1', 'TokenVerified');
    cache.invalidate('mbr_1');
    expect(cache.knownFor('mbr_1', 'TokenVerified')).toBeUndefined();
    expect(lookups).toBe(2);
    cache.close();
  });

  it('never knows a list whose lookup failed: the next event asks again', async () => {
    const cache = make();
    answer = () => Promise.reject(new Error('database down'));
    await expect(cache.activeFor('mbr_1', 'UserCreated')).rejects.toThrow('database down');
    expect(cache.knownFor('mbr_1', 'UserCreated')).toBeUndefined();
    answer = () => Promise.resolve(['hook_1']);
    await expect(cache.activeFor('mbr_1', 'UserCreated')).resolves.toEqual(['hook_1']);
    expect(lookups).toBe(2);
    cache.close();
  });
});
