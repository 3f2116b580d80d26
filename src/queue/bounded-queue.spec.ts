import { BoundedQueue } from './bounded-queue';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Lets pending microtasks (worker starts, completions) run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** A worker whose calls stay pending until released, one deferred per item. */
function gatedWorker<T>() {
  const gates = new Map<T, Deferred>();
  const started: T[] = [];
  const worker = (item: T): Promise<void> => {
    started.push(item);
    const d = deferred();
    gates.set(item, d);
    return d.promise;
  };
  return { worker, started, gates };
}

/** A queue whose worker notes each item as it starts and finishes one microtask later. */
function recordingQueue(sizes: { name: string; capacity: number; concurrency: number }) {
  const started: number[] = [];
  const q = new BoundedQueue<number>({
    ...sizes,
    worker: async (n) => {
      started.push(n);
      await Promise.resolve();
    },
  });
  return { q, started };
}

describe('BoundedQueue', () => {
  describe('construction', () => {
    it('exposes name and capacity and starts empty', () => {
      const q = new BoundedQueue<number>({ name: 'webhooks', capacity: 10_000, concurrency: 8, worker: async () => {} });
      expect(q.name).toBe('webhooks');
      expect(q.capacity).toBe(10_000);
      expect(q.depth).toBe(0);
      expect(q.inFlight).toBe(0);
      expect(q.dropped).toBe(0);
      expect(q.processed).toBe(0);
      expect(q.isClosed).toBe(false);
    });

    it.each([
      [{ capacity: -1, concurrency: 1 }],
      [{ capacity: 1.5, concurrency: 1 }],
      [{ capacity: Number.NaN, concurrency: 1 }],
      [{ capacity: 1, concurrency: 0 }],
      [{ capacity: 1, concurrency: 2.5 }],
    ])('rejects invalid sizes %j', (sizes) => {
      expect(() => new BoundedQueue<number>({ name: 'x', worker: async () => {}, ...sizes })).toThrow(RangeError);
    });
  });

  describe('capacity and drops', () => {
    it('counts only waiting items against capacity and drops when full', async () => {
      const { worker, gates } = gatedWorker<number>();
      const onDrop = jest.fn();
      const q = new BoundedQueue<number>({ name: 'q', capacity: 3, concurrency: 2, worker, onDrop });

      const accepted = [1, 2, 3, 4, 5].map((n) => q.enqueue(n));
      expect(accepted).toEqual([true, true, true, true, true]);
      expect(q.inFlight).toBe(2); // 1 and 2 run, outside capacity
      expect(q.depth).toBe(3); // 3, 4, 5 wait

      expect(q.enqueue(6)).toBe(false);
      expect(q.enqueue(7)).toBe(false);
      expect(q.dropped).toBe(2);
      expect(onDrop.mock.calls).toEqual([[6], [7]]);
      expect(q.depth).toBe(3);

      // Freeing a slot moves one waiting item to in-flight and frees one capacity slot.
      await flush();
      gates.get(1)!.resolve();
      await flush();
      expect(q.inFlight).toBe(2);
      expect(q.depth).toBe(2);
      expect(q.enqueue(8)).toBe(true);
      expect(q.enqueue(9)).toBe(false);
      expect(q.dropped).toBe(3);

      for (const n of [2, 3, 4, 5, 8]) {
        await flush();
        gates.get(n)!.resolve();
      }
      await q.onIdle();
      expect(q.processed).toBe(6);
      expect(q.dropped).toBe(3);
    });

    it('capacity 0 runs items only when a slot is free', async () => {
      const { worker, gates } = gatedWorker<string>();
      const q = new BoundedQueue<string>({ name: 'q', capacity: 0, concurrency: 1, worker });
      expect(q.enqueue('a')).toBe(true);
      expect(q.enqueue('b')).toBe(false);
      expect(q.dropped).toBe(1);
      await flush();
      gates.get('a')!.resolve();
      await q.onIdle();
      expect(q.enqueue('c')).toBe(true);
      await flush();
      gates.get('c')!.resolve();
      await q.onIdle();
      expect(q.processed).toBe(2);
    });

    it('a throwing onDrop does not break enqueue', () => {
      const q = new BoundedQueue<number>({
        name: 'q',
        capacity: 0,
        concurrency: 1,
        worker: () => new Promise<void>(() => {}),
        onDrop: () => {
          throw new Error('log sink down');
        },
      });
      q.enqueue(1);
      expect(q.enqueue(2)).toBe(false);
      expect(q.dropped).toBe(1);
    });
  });

  describe('concurrency and order', () => {
    it('never runs more than `concurrency` workers at once', async () => {
      let active = 0;
      let maxActive = 0;
      const pending: Deferred[] = [];
      const q = new BoundedQueue<number>({
        name: 'q',
        capacity: 100,
        concurrency: 3,
        worker: async () => {
          active++;
          maxActive = Math.max(maxActive, active);
          const d = deferred();
          pending.push(d);
          try {
            await d.promise;
          } finally {
            active--;
          }
        },
      });
      for (let i = 0; i < 20; i++) q.enqueue(i);
      await flush();
      expect(active).toBe(3);
      expect(q.inFlight).toBe(3);
      expect(q.depth).toBe(17);

      // Release in a scattered order, a few at a time.
      while (q.inFlight > 0 || q.depth > 0) {
        await flush();
        const open = pending.splice(0, pending.length);
        open.reverse().forEach((d, i) => (i % 2 === 0 ? d.resolve() : d.reject(new Error('x'))));
        await flush();
        expect(active).toBeLessThanOrEqual(3);
      }
      await q.onIdle();
      expect(maxActive).toBe(3);
      expect(q.processed).toBe(20);
    });

    it('starts workers in FIFO order as slots free up', async () => {
      const { worker, started, gates } = gatedWorker<number>();
      const q = new BoundedQueue<number>({ name: 'q', capacity: 100, concurrency: 2, worker });
      for (let i = 1; i <= 6; i++) q.enqueue(i);
      await flush();
      expect(started).toEqual([1, 2]);
      gates.get(2)!.resolve(); // completion order differs from start order
      await flush();
      expect(started).toEqual([1, 2, 3]);
      gates.get(1)!.resolve();
      await flush();
      expect(started).toEqual([1, 2, 3, 4]);
      gates.get(4)!.resolve();
      gates.get(3)!.resolve();
      await flush();
      expect(started).toEqual([1, 2, 3, 4, 5, 6]);
      gates.get(5)!.resolve();
      gates.get(6)!.resolve();
      await q.onIdle();
    });

    it('keeps FIFO order across ring-buffer wrap-around', async () => {
      const { q, started } = recordingQueue({ name: 'q', capacity: 3, concurrency: 1 });
      let next = 0;
      const expected: number[] = [];
      for (let round = 0; round < 10; round++) {
        for (let k = 0; k < 4; k++) {
          if (q.enqueue(next)) expected.push(next);
          next++;
        }
        await q.onIdle();
      }
      expect(started).toEqual(expected);
      expect(expected.length).toBe(40); // 1 running + 3 waiting fit each round
    });

    it('does not run worker code on the caller stack', () => {
      const worker = jest.fn(async () => {});
      const q = new BoundedQueue<number>({ name: 'q', capacity: 1, concurrency: 1, worker });
      q.enqueue(1);
      expect(worker).not.toHaveBeenCalled();
      expect(q.inFlight).toBe(1); // but the slot is already reserved
    });
  });

  describe('failing workers', () => {
    it('keeps going after rejections and synchronous throws, reporting them to onError', async () => {
      const onError = jest.fn();
      const done: number[] = [];
      const worker = (n: number): Promise<void> => {
        if (n === 2) return Promise.reject(new Error('receiver 500'));
        if (n === 3) throw new Error('sync boom');
        done.push(n);
        return Promise.resolve();
      };
      const q = new BoundedQueue<number>({ name: 'q', capacity: 10, concurrency: 1, worker, onError });
      for (const n of [1, 2, 3, 4]) q.enqueue(n);
      await q.onIdle();
      expect(done).toEqual([1, 4]);
      expect(q.processed).toBe(4);
      expect(onError).toHaveBeenCalledTimes(2);
      expect(onError.mock.calls[0]).toEqual([new Error('receiver 500'), 2]);
      expect(onError.mock.calls[1]).toEqual([new Error('sync boom'), 3]);
    });

    it('survives without onError and with a throwing onError (no unhandled rejection)', async () => {
      const unhandled = jest.fn();
      process.on('unhandledRejection', unhandled);
      try {
        const silent = new BoundedQueue<number>({ name: 'a', capacity: 5, concurrency: 2, worker: async () => Promise.reject(new Error('x')) });
        const noisy = new BoundedQueue<number>({
          name: 'b',
          capacity: 5,
          concurrency: 2,
          worker: async () => Promise.reject(new Error('x')),
          onError: () => {
            throw new Error('handler broke');
          },
        });
        for (let i = 0; i < 5; i++) {
          silent.enqueue(i);
          noisy.enqueue(i);
        }
        await Promise.all([silent.onIdle(), noisy.onIdle()]);
        await new Promise((r) => setImmediate(r));
        expect(silent.processed).toBe(5);
        expect(noisy.processed).toBe(5);
        expect(unhandled).not.toHaveBeenCalled();
      } finally {
        process.off('unhandledRejection', unhandled);
      }
    });
  });

  describe('onIdle', () => {
    it('resolves at once when idle and after work otherwise', async () => {
      const { worker, gates } = gatedWorker<number>();
      const q = new BoundedQueue<number>({ name: 'q', capacity: 5, concurrency: 1, worker });
      await expect(q.onIdle()).resolves.toBeUndefined();
      q.enqueue(1);
      let idle = false;
      void q.onIdle().then(() => (idle = true));
      await flush();
      expect(idle).toBe(false);
      gates.get(1)!.resolve();
      await flush();
      expect(idle).toBe(true);
    });
  });

  describe('drain', () => {
    afterEach(() => {
      jest.useRealTimers();
    });

    it('completes at once when idle and refuses new items afterwards', async () => {
      const worker = jest.fn(async () => {});
      const onDrop = jest.fn();
      const q = new BoundedQueue<number>({ name: 'q', capacity: 5, concurrency: 1, worker, onDrop });
      await expect(q.drain(1000)).resolves.toEqual({ completed: true, delivered: 0, lost: 0 });
      expect(q.isClosed).toBe(true);
      expect(q.enqueue(1)).toBe(false);
      expect(q.dropped).toBe(0); // refusal after close is not a drop
      expect(onDrop).not.toHaveBeenCalled();
      await flush();
      expect(worker).not.toHaveBeenCalled();
    });

    it('waits for queued and in-flight work and reports what it delivered', async () => {
      const { worker, gates } = gatedWorker<number>();
      const q = new BoundedQueue<number>({ name: 'q', capacity: 10, concurrency: 2, worker });
      for (let i = 1; i <= 5; i++) q.enqueue(i);
      await flush();
      gates.get(1)!.resolve();
      await flush();
      expect(q.processed).toBe(1);

      const result = q.drain(5000);
      expect(q.enqueue(99)).toBe(false);
      for (const n of [2, 3, 4, 5]) {
        await flush();
        gates.get(n)!.resolve();
      }
      await expect(result).resolves.toEqual({ completed: true, delivered: 4, lost: 0 });
      expect(gates.has(99)).toBe(false);
    });

    it('times out with a hanging worker, reports lost items and starts nothing afterwards', async () => {
      jest.useFakeTimers();
      const started: number[] = [];
      const worker = (n: number): Promise<void> => {
        started.push(n);
        if (n === 1) return new Promise<void>(() => {}); // hangs forever
        return new Promise<void>((r) => setTimeout(r, 100));
      };
      const q = new BoundedQueue<number>({ name: 'q', capacity: 10, concurrency: 2, worker });
      for (let i = 1; i <= 5; i++) q.enqueue(i);
      const result = q.drain(250);
      // 2 finishes at 100 (3 starts), 3 at 200 (4 starts); at 250: 1 and 4 in flight, 5 waiting.
      await jest.advanceTimersByTimeAsync(250);
      await expect(result).resolves.toEqual({ completed: false, delivered: 2, lost: 3 });
      expect(q.depth).toBe(0); // the waiting item was discarded
      expect(q.inFlight).toBe(2);
      await jest.advanceTimersByTimeAsync(1000);
      expect(started).toEqual([1, 2, 3, 4]); // 5 never starts
      expect(q.inFlight).toBe(1); // only the hanging worker is left
      expect(jest.getTimerCount()).toBe(0); // the deadline timer was cleared / has fired
    });

    it('clears its deadline timer when work finishes first', async () => {
      jest.useFakeTimers();
      const q = new BoundedQueue<number>({
        name: 'q',
        capacity: 10,
        concurrency: 1,
        worker: () => new Promise<void>((r) => setTimeout(r, 10)),
      });
      q.enqueue(1);
      q.enqueue(2);
      const result = q.drain(30_000);
      await jest.advanceTimersByTimeAsync(20);
      await expect(result).resolves.toEqual({ completed: true, delivered: 2, lost: 0 });
      expect(jest.getTimerCount()).toBe(0);
    });

    it('treats a non-positive or invalid timeout as an immediate deadline', async () => {
      const q = new BoundedQueue<number>({ name: 'q', capacity: 10, concurrency: 1, worker: () => new Promise<void>(() => {}) });
      q.enqueue(1);
      q.enqueue(2);
      await expect(q.drain(Number.NaN)).resolves.toEqual({ completed: false, delivered: 0, lost: 2 });
      await expect(q.drain(-5)).resolves.toEqual({ completed: false, delivered: 0, lost: 1 });
    });
  });

  describe('throughput', () => {
    it('processes 10,000 items at capacity 10,000 / concurrency 8, every one, in order', async () => {
      const { q, started: seen } = recordingQueue({ name: 'webhooks', capacity: 10_000, concurrency: 8 });
      let accepted = 0;
      for (let i = 0; i < 10_000; i++) if (q.enqueue(i)) accepted++;
      expect(accepted).toBe(10_000);
      expect(q.inFlight + q.depth).toBe(10_000);
      expect(q.depth).toBeLessThanOrEqual(10_000);
      await q.onIdle();
      expect(q.processed).toBe(10_000);
      expect(q.dropped).toBe(0);
      expect(seen).toHaveLength(10_000);
      expect(seen.every((n, i) => n === i)).toBe(true);
      // No time limit here: tests assert no times (shared cores); the webhook-load bench measures the rate.
    });

    it('drops exactly the overflow when 10,000 + 8 + 500 items arrive at once', async () => {
      const gate = deferred();
      const onDrop = jest.fn();
      const q = new BoundedQueue<number>({ name: 'mail', capacity: 10_000, concurrency: 8, worker: () => gate.promise, onDrop });
      let accepted = 0;
      for (let i = 0; i < 10_508; i++) if (q.enqueue(i)) accepted++;
      expect(accepted).toBe(10_008);
      expect(q.dropped).toBe(500);
      expect(onDrop).toHaveBeenCalledTimes(500);
      expect(onDrop).toHaveBeenLastCalledWith(10_507);
      gate.resolve();
      await q.onIdle();
      expect(q.processed).toBe(10_008);
    });
  });
});
