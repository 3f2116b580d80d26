import { eq } from 'drizzle-orm';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { openTestDatabase, useTestDatabase } from '../../test/support/database';
import { captureLog } from '../../test/support/log-capture';
import { events, type EventRow } from '../database/schema';
import { EventRecorder, READ_BACKLOG, type NewEvent, type RecordedEvent } from './event-recorder';
import { EventRepository } from './event.repository';

/**
 * Its writes are held at a gate, one release per group-commit write, so a test can see what is
 * stored while a write is still on its way. The writes themselves are real.
 */
class GatedEventRepository extends EventRepository {
  private readonly held: (() => void)[] = [];
  private readonly arrivals: (() => void)[] = [];
  /** The utilizer ids of each write, in the order the writes reached the gate. */
  readonly batches: string[][] = [];

  override async insertBatch(rows: readonly EventRow[]): Promise<void> {
    await this.gate(rows);
    await super.insertBatch(rows);
  }

  override async insertReadBatch(rows: readonly EventRow[]): Promise<void> {
    await this.gate(rows);
    await super.insertReadBatch(rows);
  }

  private gate(rows: readonly EventRow[]): Promise<void> {
    this.batches.push(rows.map((row) => row.utilizerId));
    return new Promise<void>((resolve) => {
      this.held.push(resolve);
      this.arrivals.shift()?.(); // wake a test waiting in nextWrite()
    });
  }

  /** Resolves when a write is held at the gate. */
  nextWrite(): Promise<void> {
    if (this.held.length) return Promise.resolve();
    return new Promise((resolve) => this.arrivals.push(resolve));
  }

  release(): void {
    const next = this.held.shift();
    if (!next) throw new Error('no write is held');
    next();
  }
}

type TestDatabase = ReturnType<ReturnType<typeof useTestDatabase>>;

let counter = 0;
/** A TokenVerified with a utilizer of its own, so that a test counts only its own rows. */
const verifiedIn = (membershipId: string): NewEvent => ({
  membershipId,
  eventType: 'TokenVerified',
  utilizerId: `u-${++counter}`,
  document: { token_type: 'Bearer', is_refresh_token: false, expires_at: '2026-01-01T00:00:00.000Z' },
});
const storedIn = async (database: TestDatabase, utilizerId: string) => (await database.db.select().from(events).where(eq(events.utilizerId, utilizerId))).length;
/** Still pending 50 ms later. */
const isPending = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
  return !done;
};

describe('EventRecorder: group-committed events (record)', () => {
  const database = useTestDatabase();
  const log = captureLog();
  const logger = log.logger;

  beforeEach(() => {
    log.clear();
  });

  const verified = () => verifiedIn('m-recorder');
  const stored = (utilizerId: string) => storedIn(database(), utilizerId);

  /**
   * A recorder over a gated repository. `recordHeld` records an event and comes back once its
   * write is held at the gate, with the caller's promise (wrapped, so awaiting it does not wait).
   */
  const gatedRecorder = () => {
    const repository = new GatedEventRepository(database());
    const recorder = new EventRecorder(repository, logger);
    const recordHeld = async (event: NewEvent): Promise<{ recording: Promise<RecordedEvent> }> => {
      const recording = recorder.record(event);
      await repository.nextWrite();
      return { recording };
    };
    return { repository, recorder, recordHeld };
  };

  it('resolves only once the event is stored, and settled() waits for it; listeners hear of it after the commit', async () => {
    const { repository, recorder, recordHeld } = gatedRecorder();
    const heard: RecordedEvent[] = [];
    recorder.onCommitted((rows) => heard.push(...rows));

    const event = verified();
    const { recording } = await recordHeld(event);
    const settled = recorder.settled();
    expect(await isPending(recording)).toBe(true);
    expect(await isPending(settled)).toBe(true);
    expect(await stored(event.utilizerId)).toBe(0);
    expect(heard).toEqual([]);

    repository.release();
    await recording;
    await settled;
    expect(await stored(event.utilizerId)).toBe(1);
    expect(heard.map((row) => row.utilizerId)).toEqual([event.utilizerId]);
  });

  it('settled() does not wait for events recorded after it was called', async () => {
    const { repository, recorder, recordHeld } = gatedRecorder();
    const first = verified();
    const second = verified();

    const { recording: recordingFirst } = await recordHeld(first);
    const settled = recorder.settled();
    const recordingSecond = recorder.record(second); // a second write, beside the one in flight

    repository.release();
    await settled;
    await recordingFirst;
    expect(await stored(first.utilizerId)).toBe(1);
    await repository.nextWrite(); // the second write is held: settled() did not wait for it
    expect(await stored(second.utilizerId)).toBe(0);

    repository.release();
    await recordingSecond;
    expect(await stored(second.utilizerId)).toBe(1);
  });

  it('writes one batch at a time: events recorded during a write go together in the next one, after it', async () => {
    const { repository, recorder, recordHeld } = gatedRecorder();
    const [first, second, third] = [verified(), verified(), verified()];

    const { recording: recordingFirst } = await recordHeld(first);
    const recordingSecond = recorder.record(second);
    const recordingThird = recorder.record(third);
    expect(await isPending(recordingSecond)).toBe(true);
    expect(repository.batches).toEqual([[first.utilizerId]]); // no second write beside the first
    const settled = recorder.settled();

    repository.release();
    await recordingFirst;
    await repository.nextWrite();
    expect(repository.batches).toEqual([[first.utilizerId], [second.utilizerId, third.utilizerId]]);
    expect(await isPending(settled)).toBe(true);
    expect(await stored(second.utilizerId)).toBe(0);

    repository.release();
    await Promise.all([recordingSecond, recordingThird, settled]);
    expect(await stored(second.utilizerId)).toBe(1);
    expect(await stored(third.utilizerId)).toBe(1);
  });

  it('settles at once when nothing is being written', async () => {
    const recorder = new EventRecorder(new EventRepository(database()), logger);
    expect(await isPending(recorder.settled())).toBe(false);
  });

  it('rejects the caller of a write that fails, hears nothing, and still settles', async () => {
    const broken = await openTestDatabase();
    await broken.close();
    const recorder = new EventRecorder(new EventRepository(broken.database), logger);
    const heard: RecordedEvent[] = [];
    recorder.onCommitted((rows) => heard.push(...rows));

    await expect(recorder.record(verified())).rejects.toBeInstanceOf(DrizzleQueryError);
    await recorder.settled();
    expect(heard).toEqual([]);
  });

  it('writes what is still pending before the application shuts down', async () => {
    const { repository, recorder, recordHeld } = gatedRecorder();
    const event = verified();
    const { recording } = await recordHeld(event);

    const shutdown = recorder.beforeApplicationShutdown();
    expect(await isPending(shutdown)).toBe(true);
    repository.release();
    await shutdown;
    await recording;
    expect(await stored(event.utilizerId)).toBe(1);
  });
});

describe('EventRecorder: read events, written after the answer (recordRead)', () => {
  const database = useTestDatabase();
  const log = captureLog();

  beforeEach(() => {
    log.clear();
  });

  const verified = () => verifiedIn('m-reads');
  const stored = (utilizerId: string) => storedIn(database(), utilizerId);
  const gatedRecorder = () => {
    const repository = new GatedEventRepository(database());
    return { repository, recorder: new EventRecorder(repository, log.logger) };
  };

  it('resolves before its event is stored; settled(), shutdown and listeners wait for the write', async () => {
    const { repository, recorder } = gatedRecorder();
    const heard: RecordedEvent[] = [];
    recorder.onCommitted((rows) => heard.push(...rows));

    const event = verified();
    await recorder.recordRead(event); // the caller answers now
    await repository.nextWrite();
    expect(await stored(event.utilizerId)).toBe(0);
    const settled = recorder.settled();
    const shutdown = recorder.beforeApplicationShutdown();
    expect(await isPending(settled)).toBe(true);
    expect(await isPending(shutdown)).toBe(true);
    expect(heard).toEqual([]);

    repository.release();
    await Promise.all([settled, shutdown]);
    expect(await stored(event.utilizerId)).toBe(1);
    expect(heard.map((row) => row.utilizerId)).toEqual([event.utilizerId]);
  });

  it('gathers the reads of a few milliseconds into one write', async () => {
    const { repository, recorder } = gatedRecorder();
    const reads = [verified(), verified(), verified()];
    // Without the wait, the first read's write would start at once, alone.
    for (const read of reads) await recorder.recordRead(read);
    await repository.nextWrite();
    expect(repository.batches).toEqual([reads.map((read) => read.utilizerId)]);
    repository.release();
    await recorder.settled();
    for (const read of reads) expect(await stored(read.utilizerId)).toBe(1);
  });

  it(`past ${READ_BACKLOG} unwritten reads, a read resolves only once its own event is stored`, async () => {
    const { repository, recorder } = gatedRecorder();
    for (let i = 0; i < READ_BACKLOG; i++) await recorder.recordRead(verified());
    const last = verified();
    const waiting = recorder.recordRead(last);
    expect(await isPending(waiting)).toBe(true);

    // Release every write until the last read's is through: it resolves only then.
    let released = false;
    void waiting.then(() => (released = true));
    while (!released) {
      await repository.nextWrite();
      repository.release();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await stored(last.utilizerId)).toBe(1);
    await recorder.settled();
  });

  it('logs a write that fails after the answer, without the event document, and still settles', async () => {
    const broken = await openTestDatabase();
    await broken.close();
    const recorder = new EventRecorder(new EventRepository(broken.database), log.logger);
    const heard: RecordedEvent[] = [];
    recorder.onCommitted((rows) => heard.push(...rows));

    await recorder.recordRead(verified());
    await recorder.settled();
    await new Promise((resolve) => setImmediate(resolve)); // the log line follows the rejection
    expect(heard).toEqual([]);
    const lines = log.lines().filter((line) => line.msg === 'a read event was not recorded');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, event_type: 'TokenVerified', membership_id: 'm-reads', event_id: expect.any(String) });
    expect(log.text()).not.toContain('expires_at');
  });
});
