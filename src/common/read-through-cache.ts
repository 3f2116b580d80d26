import type { AppConfig } from '../config/config';
import { BoundedCache, type BoundedCacheOptions } from './bounded-cache';

/** The longest a row may be cached per instance (the specification's limit). */
const ROW_CACHE_MAX_TTL_MS = 60 * 60 * 1000;
/**
 * How long a miss of a row looked up by id or slug is remembered: long enough that probing unknown
 * keys spares the database, short enough that a row created on another instance appears soon.
 */
const ROW_MISS_TTL_MS = 10_000;

/** Stands for "looked up, not there" (the bounded cache holds no undefined). */
const MISSING = Symbol('missing');

export interface ReadThroughCacheOptions extends BoundedCacheOptions {
  /**
   * How long a miss is remembered; left out, as long as a hit. Short where a row created on
   * another instance must appear soon, long enough that probing unknown keys spares the database.
   */
  missTtlMs?: number;
}

/**
 * The one shape of the service's per-instance caches of rows (memberships, user types, roles,
 * providers): a BoundedCache in front of a repository lookup that remembers hits and misses.
 * Each cache extends it (through RowCache) and states only its key, its lookup and its
 * lifetimes; the application closes it at shutdown (onModuleDestroy).
 */
export abstract class ReadThroughCache<V extends NonNullable<unknown>> {
  private readonly entries: BoundedCache<V | typeof MISSING>;
  private readonly hitTtlMs: number;
  private readonly missTtlMs: number;
  /**
   * Moves with every forget. A load that began before a forget may have read the row before the
   * change that caused it, and would put the old row back for a whole lifetime: it is not kept.
   */
  private generation = 0;

  protected constructor(options: ReadThroughCacheOptions) {
    this.entries = new BoundedCache({ maxEntries: options.maxEntries, ttlMs: options.ttlMs });
    this.hitTtlMs = options.ttlMs;
    this.missTtlMs = options.missTtlMs ?? options.ttlMs;
  }

  /** The cached value of `key`, or what `load` finds (undefined: none), which is then remembered. */
  protected async read(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const cached = this.entries.get(key);
    if (cached !== undefined) return cached === MISSING ? undefined : cached;
    const generation = this.generation;
    const loaded = await load();
    if (generation === this.generation) this.entries.set(key, loaded ?? MISSING, loaded === undefined ? this.missTtlMs : this.hitTtlMs);
    return loaded;
  }

  /** Called by the instance that changed the row, so the change is visible there at once. */
  protected forgetKey(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  /**
   * Forgets every row of one membership (keys made by membershipScopedKey): another instance
   * changed some of them and said which membership, not which rows.
   */
  protected forgetMembershipScoped(membershipId: string): void {
    const prefix = membershipScopedKey(membershipId, '');
    this.generation++;
    this.entries.deleteWhere((key) => key.startsWith(prefix));
  }

  /** Forgets everything: changes made elsewhere may have gone unheard (the LISTEN connection was lost). */
  forgetAll(): void {
    this.generation++;
    this.entries.clear();
  }

  /** Entries held now (hits and remembered misses). */
  get size(): number {
    return this.entries.size;
  }

  /** Stops the sweep timer (application shutdown). */
  onModuleDestroy(): void {
    this.entries.close();
  }
}

/** How long a row cache keeps what it read: a hit `ttlMs`, a miss `missTtlMs` (left out: as long as a hit). */
export type RowCacheLifetimes = Pick<ReadThroughCacheOptions, 'ttlMs' | 'missTtlMs'>;

/** As long as the specification allows a row to be cached; a miss ROW_MISS_TTL_MS. */
const SPECIFICATION_LIFETIMES: RowCacheLifetimes = Object.freeze({ ttlMs: ROW_CACHE_MAX_TTL_MS, missTtlMs: ROW_MISS_TTL_MS });

/**
 * A cache of one kind of row, bounded like every in-process cache by CACHE_MAX_ENTRIES. Unless it
 * states lifetimes of its own, it keeps a row as long as the specification allows and a miss
 * ROW_MISS_TTL_MS.
 */
export abstract class RowCache<V extends NonNullable<unknown>> extends ReadThroughCache<V> {
  protected constructor(config: Pick<AppConfig, 'cacheMaxEntries'>, lifetimes: RowCacheLifetimes = SPECIFICATION_LIFETIMES) {
    super({ maxEntries: config.cacheMaxEntries, ...lifetimes });
  }
}

/** The key of a row named by its slug inside one membership (ids hold no ':', so keys cannot collide). */
export function membershipScopedKey(membershipId: string, slug: string): string {
  return `${membershipId}:${slug}`;
}
