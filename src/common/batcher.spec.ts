import { Batcher } from './batcher';

/** A statement the test finishes by hand: each call of `run` waits until the test releases it. */
function manualStatements<T, R>(answer: (items: T[]) => R[] | Promise<R[]>) {
  const calls: { items: T[]; release: () => void }[] = [];
  const run = (items: T[]) =>
    new Promise<void>((release) => calls.push({ items, release })).then(() => answer(items));
  return { calls, run };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Batcher', () => {
  it('answers each item with its own answer, and sends what arrived meanwhile as one statement', async () => {
    const { calls, run } = manualStatements<number, string>((items) => items.map((item) => `answer ${item}`));
    const batcher = new Batcher<number, string>(run);

    const first = batcher.add(1);
    await tick();
    const waiting = [batcher.add(2), batcher.add(3), batcher.add(4)];
    await tick();
    expect(calls.map((call) => call.items)).toEqual([[1]]);

    calls[0].release();
    expect(await first).toBe('answer 1');
    await tick();
    expect(calls.map((call) => call.items)).toEqual([[1], [2, 3, 4]]);
    calls[1].release();
    expect(await Promise.all(waiting)).toEqual(['answer 2', 'answer 3', 'answer 4']);
    expect(batcher.idle).toBe(true);
  });

  it("fails every item of a failed statement with its error, and goes on with the next", async () => {
    let fail = true;
    const { calls, run } = manualStatements<number, number>((items) => {
      if (fail) throw new Error('connection lost');
      return items.map((item) => item * 10);
    });
    const batcher = new Batcher<number, number>(run);

    const first = batcher.add(1);
    await tick();
    const second = [batcher.add(2), batcher.add(3)];
    await tick();
    calls[0].release();
    await expect(first).rejects.toThrow('connection lost');

    fail = false;
    await tick();
    calls[1].release();
    expect(await Promise.all(second)).toEqual([20, 30]);
  });

  it('answers undefined for items the statement has no answer for', async () => {
    const batcher = new Batcher<string, number | undefined>(async (items) => items.map((item) => (item === 'known' ? 1 : undefined)));
    expect(await Promise.all([batcher.add('known'), batcher.add('unknown')])).toEqual([1, undefined]);
  });
});
