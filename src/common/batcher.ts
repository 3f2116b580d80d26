/** Most items in one statement. */
const MAX_BATCH = 500;

/**
 * Sends the items added while a statement is on its way in the next statement, at most MAX_BATCH
 * per statement, one statement at a time, in the order the items were added; each item gets its
 * own answer (`run` returns one per item, in order) or the statement's error. With `gatherMs`,
 * each statement first waits that long, so that the items added meanwhile go with it.
 *
 * The event log's group commits use it (written events, read events, webhook attempt results), and
 * the token lookup of refresh and the other token operations (TokenSessionRepository).
 *
 * One statement at a time: an item added while a statement runs waits for the rest of it, then for
 * its own; in exchange each statement carries every item that came meanwhile, and every statement
 * costs both processes more than a row does. Fewer statements in flight made bigger batches and
 * cheaper verifications each time it was measured (verify-token Bearer, builds alternating): three
 * against two, 1.61 rows per INSERT against 1.99 and a fifth more CPU; two against one
 * (2026-11-29, four pairs), 62-73% of the floor against 72-78%, and PostgreSQL's CPU per
 * verification 247-312 µs against 220-240 µs. Two token lookups in flight made refresh no faster
 * than one (2026-12-03).
 */
export class Batcher<T, R = void> {
  private waiting: { item: T; resolve: (answer: R) => void; reject: (error: unknown) => void }[] = [];
  private running = false;
  /** Items added so far, and how many of them have been answered (or failed): always a prefix, statements go in order. */
  private added = 0;
  private done = 0;
  /** `settled` callers, each waiting for `done` to reach the `added` it saw; in order of `upTo`. */
  private barriers: { upTo: number; resolve: () => void }[] = [];

  constructor(
    private readonly run: (items: T[]) => Promise<readonly R[] | void>,
    private readonly gatherMs = 0,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.added++;
      if (!this.running) void this.runWaiting();
    });
  }

  settled(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise<void>((resolve) => this.barriers.push({ upTo: this.added, resolve }));
  }

  /** Every item added so far is answered (or failed). */
  get idle(): boolean {
    return this.done === this.added;
  }

  /** Items added and not answered yet (waiting, or in the statement on its way). */
  get unwritten(): number {
    return this.added - this.done;
  }

  /** Runs batches until nothing waits; only one of these loops runs at a time. */
  private async runWaiting(): Promise<void> {
    this.running = true;
    while (this.waiting.length) {
      // A backlog of a whole batch has nothing to gather.
      if (this.gatherMs && this.waiting.length < MAX_BATCH) await new Promise((resolve) => setTimeout(resolve, this.gatherMs));
      const batch = this.waiting.splice(0, MAX_BATCH);
      try {
        const answers = await this.run(batch.map((entry) => entry.item));
        // `R` is void exactly when `run` answers nothing.
        batch.forEach((entry, index) => entry.resolve(answers?.[index] as R));
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
      this.done += batch.length;
      while (this.barriers.length && this.barriers[0].upTo <= this.done) this.barriers.shift()?.resolve();
    }
    this.running = false;
  }
}
