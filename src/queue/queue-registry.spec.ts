import { BoundedQueue } from './bounded-queue';
import { QueueRegistry } from './queue-registry';

describe('QueueRegistry', () => {
  it('lists registered queues with live figures', async () => {
    const registry = new QueueRegistry();
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const queue = new BoundedQueue<number>({ name: 'mail', capacity: 2, concurrency: 1, worker: () => blocked });
    registry.register(queue);
    expect(registry.stats()).toEqual([{ name: 'mail', capacity: 2, depth: 0, inFlight: 0, dropped: 0, processed: 0, closed: false }]);
    for (let i = 0; i < 4; i++) queue.enqueue(i);
    expect(registry.stats()[0]).toMatchObject({ depth: 2, inFlight: 1, dropped: 1 });
    expect(registry.get('mail')).toBe(queue);
    expect(registry.list()).toEqual([queue]);
    release();
    await queue.drain(1000);
    expect(registry.stats()[0]).toMatchObject({ depth: 0, inFlight: 0, processed: 3, closed: true });
  });

  it('refuses two queues with one name', () => {
    const registry = new QueueRegistry();
    const make = () => new BoundedQueue<number>({ name: 'webhooks', capacity: 1, concurrency: 1, worker: async () => undefined });
    registry.register(make());
    expect(() => registry.register(make())).toThrow(/already registered/);
    expect(registry.get('nope')).toBeUndefined();
  });
});
