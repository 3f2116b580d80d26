import { LRUCache } from 'lru-cache';

/** How often expired entries are dropped even when nobody reads them again. */
export const CACHE_PURGE_INTERVAL_MS = 5_000;

export interface BoundedCacheOptions {
  /** Most entries kept; past it the least recently used one goes (CACHE_MAX_ENTRIES). */
  maxEntries: number;
  /** Lifetime of an entry unless `set` gives its own. */
  ttlMs: number;
}

/**
 * The one in-process cache of the service (contract, "Bounded work and per-object rules"): an LRU
 * with a maximum entry count whose expired entries are dropped on a timer, so that no caller can
 * grow the service's memory for good, whatever keys its requests lead to.
 *
 * Expiry reads Date.now() (not lru-cache's default, performance.now()), so tests that move the
 * clock move cache lifetimes too. Entries are swept every CACHE_PURGE_INTERVAL_MS rather than with
 * lru-cache's ttlAutopurge, which arms one timer per entry.
 */
export class BoundedCache<V extends NonNullable<unknown>> {
  private readonly entries: LRUCache<string, V>;
  private readonly purgeTimer: NodeJS.Timeout;

  constructor(options: BoundedCacheOptions) {
    this.entries = new LRUCache<string, V>({
      max: options.maxEntries,
      ttl: options.ttlMs,
      perf: { now: () => Date.now() },
      // Read the clock on every check instead of caching it for 1 ms behind a timer: one
      // Date.now() costs less than the timer, and a moved clock is seen at once.
      ttlResolution: 0,
    });
    this.purgeTimer = setInterval(() => this.entries.purgeStale(), CACHE_PURGE_INTERVAL_MS);
    // A cache never keeps the process alive on its own.
    this.purgeTimer.unref();
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: V, ttlMs?: number): void {
    this.entries.set(key, value, ttlMs === undefined ? undefined : { ttl: ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Deletes every entry whose key matches: a walk over all keys, for rare changes, never per request. */
  deleteWhere(matches: (key: string) => boolean): void {
    for (const key of [...this.entries.keys()]) if (matches(key)) this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Entries held now, expired ones not yet swept included. */
  get size(): number {
    return this.entries.size;
  }

  /** Stops the sweep timer and empties the cache (application shutdown). */
  close(): void {
    clearInterval(this.purgeTimer);
    this.entries.clear();
  }
}
