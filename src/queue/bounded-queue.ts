/**
 * A bounded in-memory work queue with a fixed number of parallel workers.
 *
 * - `capacity` bounds the items that WAIT; items being worked on do not occupy capacity.
 * - An item starts as soon as a slot is free, in FIFO order. Starting an item reserves its slot
 *   synchronously (so `depth`/`inFlight` are exact right after `enqueue`), but the worker itself
 *   is invoked on a microtask: worker code never runs on the caller's stack, and a worker that
 *   throws synchronously is treated like one that rejects.
 * - A failing worker (throw or rejection) is reported to `onError` and never stops the queue or
 *   produces an unhandled rejection. Errors thrown by `onError`/`onDrop` themselves are swallowed.
 * - Enqueue and dequeue are O(1) (ring buffer); there are no polling timers.
 *
 * Pure class, no framework imports.
 */

export interface BoundedQueueOptions<T> {
  name: string;
  capacity: number;
  concurrency: number;
  /** A rejecting worker never crashes the process or stops the queue. */
  worker: (item: T) => Promise<void>;
  /** Called when an item is dropped because the queue is full (not when it is closed). */
  onDrop?: (item: T) => void;
  /** Worker failures. */
  onError?: (error: unknown, item: T) => void;
}

export interface DrainResult {
  /** True when nothing was queued or in flight before the deadline. */
  completed: boolean;
  /** Items whose worker finished (success or failure) during this drain. */
  delivered: number;
  /** Queued + in-flight items that had not finished at the deadline (0 when completed). */
  lost: number;
}

export class BoundedQueue<T> {
  private readonly options: BoundedQueueOptions<T>;
  private readonly buffer: (T | undefined)[];
  private head = 0;
  private count = 0;
  private running = 0;
  private droppedCount = 0;
  private processedCount = 0;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(options: BoundedQueueOptions<T>) {
    if (!Number.isSafeInteger(options.capacity) || options.capacity < 0) {
      throw new RangeError(`BoundedQueue ${options.name}: capacity must be an integer >= 0`);
    }
    if (!Number.isSafeInteger(options.concurrency) || options.concurrency < 1) {
      throw new RangeError(`BoundedQueue ${options.name}: concurrency must be an integer >= 1`);
    }
    this.options = { ...options };
    this.buffer = new Array<T | undefined>(options.capacity);
  }

  get name(): string {
    return this.options.name;
  }

  get capacity(): number {
    return this.options.capacity;
  }

  /** Waiting items (not counting in-flight ones). */
  get depth(): number {
    return this.count;
  }

  get inFlight(): number {
    return this.running;
  }

  /** Total items dropped because the queue was full, since start. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Total worker completions (success or failure), since start. */
  get processed(): number {
    return this.processedCount;
  }

  /** True once `drain` has been called; a closed queue refuses new items. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Adds an item. Returns false when the queue is closed (not counted as a drop, `onDrop` not
   * called) or full (counted in `dropped`, `onDrop` called).
   */
  enqueue(item: T): boolean {
    if (this.closed) return false;
    if (this.count === 0 && this.running < this.options.concurrency) {
      this.start(item);
      return true;
    }
    if (this.count >= this.options.capacity) {
      this.droppedCount++;
      const onDrop = this.options.onDrop;
      if (onDrop) {
        try {
          onDrop(item);
        } catch {
          // A faulty drop handler must not break the caller.
        }
      }
      return false;
    }
    this.buffer[(this.head + this.count) % this.options.capacity] = item;
    this.count++;
    return true;
  }

  /** Resolves when nothing is queued or in flight. */
  onIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Closes the queue to new items and waits until nothing is queued or in flight, or until
   * `timeoutMs` has passed. On timeout, the items still waiting are discarded (they will never
   * start) and counted as lost together with the in-flight ones, whose workers cannot be
   * cancelled and may still finish later. The deadline timer is always cleared.
   */
  async drain(timeoutMs: number): Promise<DrainResult> {
    this.closed = true;
    const processedAtStart = this.processedCount;
    if (this.isIdle()) return { completed: true, delivered: 0, lost: 0 };

    const ms = Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : 0;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<true>((resolve) => {
      timer = setTimeout(() => resolve(true), ms);
    });
    const idle = this.onIdle().then(() => false as const);
    try {
      const expired = await Promise.race([idle, timedOut]);
      if (!expired || this.isIdle()) {
        return { completed: true, delivered: this.processedCount - processedAtStart, lost: 0 };
      }
      const lost = this.count + this.running;
      this.discardWaiting();
      return { completed: false, delivered: this.processedCount - processedAtStart, lost };
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  private isIdle(): boolean {
    return this.count === 0 && this.running === 0;
  }

  private start(item: T): void {
    this.running++;
    // The microtask hop keeps worker code off the caller's stack and turns a synchronous throw
    // into a rejection; the second handler pair guarantees no unhandled rejection.
    Promise.resolve()
      .then(() => this.options.worker(item))
      .then(
        () => this.finish(),
        (error: unknown) => {
          const onError = this.options.onError;
          if (onError) {
            try {
              onError(error, item);
            } catch {
              // A faulty error handler must not stop the queue.
            }
          }
          this.finish();
        },
      );
  }

  private finish(): void {
    this.running--;
    this.processedCount++;
    this.pump();
    if (this.isIdle()) this.notifyIdle();
  }

  private pump(): void {
    while (this.count > 0 && this.running < this.options.concurrency) {
      const item = this.buffer[this.head] as T;
      this.buffer[this.head] = undefined; // release the reference
      this.head = (this.head + 1) % this.options.capacity;
      this.count--;
      this.start(item);
    }
  }

  private discardWaiting(): void {
    for (let i = 0; i < this.count; i++) {
      this.buffer[(this.head + i) % this.options.capacity] = undefined;
    }
    this.head = 0;
    this.count = 0;
    if (this.running === 0) this.notifyIdle();
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
