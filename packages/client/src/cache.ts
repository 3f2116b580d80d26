/** Default bound of each cache of a client. */
export const DEFAULT_MAX_CACHE_ENTRIES = 10_000;

/**
 * A bounded cache whose entries live a fixed time from insertion (a hit does not extend them).
 * All entries share one TTL, so insertion order is expiry order: when full, the oldest entry is
 * evicted first.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private generationValue = 0;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number = DEFAULT_MAX_CACHE_ENTRIES,
    private readonly now: () => number = Date.now,
  ) {
    if (!(maxEntries >= 1)) throw new RangeError('maxEntries must be at least 1');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Moves with every `clear`: a value looked up across one may predate what cleared it. */
  get generation(): number {
    return this.generationValue;
  }

  /** Keeps `value` for the TTL, unless the cache was cleared since `generation` (when its lookup began). */
  set(key: string, value: V, generation = this.generationValue): void {
    if (generation !== this.generationValue) return;
    this.entries.delete(key);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
  }

  keys(): string[] {
    return [...this.entries.keys()];
  }

  clear(): void {
    this.generationValue++;
    this.entries.clear();
  }
}

/** A lookup's result: a value, or a failure of type F (never cached). */
export type Lookup<T, F> = { ok: true; value: T } | { ok: false; failure: F };

/**
 * Runs lookups so that concurrent identical ones (same key) share one call, the pending promise
 * being forgotten when it settles; and, with a cache, serves successful results until they expire.
 * Failures are never cached.
 *
 * A lookup is shared only within one `epoch` (the caller's count of invalidations): a request
 * that comes after an invalidation must not take an answer asked for before it, and an answer is
 * then judged by the epoch its call started in, whoever joined it later.
 */
export class LookupTable<T, F> {
  private readonly inFlight = new Map<string, { epoch: number; promise: Promise<Lookup<T, F>> }>();

  constructor(private readonly cache?: TtlCache<T>) {}

  get pending(): number {
    return this.inFlight.size;
  }

  /** A cached result comes at once; a lookup's, as a promise. */
  run(key: string, cacheable: boolean, fetch: () => Promise<Lookup<T, F>>, epoch = 0): Lookup<T, F> | Promise<Lookup<T, F>> {
    const cache = cacheable ? this.cache : undefined;
    const hit = cache?.get(key);
    if (hit !== undefined) return { ok: true, value: hit };

    const pending = this.inFlight.get(key);
    if (pending !== undefined && pending.epoch === epoch) return pending.promise;

    const generation = cache?.generation;
    const promise = fetch()
      .then((result) => {
        if (result.ok) cache?.set(key, result.value, generation);
        return result;
      })
      .finally(() => {
        // A newer epoch's lookup of the same key may have taken the place meanwhile.
        if (this.inFlight.get(key)?.promise === promise) this.inFlight.delete(key);
      });
    this.inFlight.set(key, { epoch, promise });
    return promise;
  }

  /** Forgets every kept result; a lookup under way when this is called keeps nothing either. */
  clearCache(): void {
    this.cache?.clear();
  }
}
