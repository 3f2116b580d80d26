import { useTestDatabase } from '../../test/support/unit/test-database';
import { captureLog } from '../../test/support/log-capture';
import type { EventRow } from '../database/schema';
import { EventRepository } from '../events/event.repository';

/**
 * A failed statement's error, logged: the statement and the driver's code, never the values it
 * carried. A real unique violation on a real database, so both Drizzle's error (parameters in
 * `params`, the message and the stack) and the driver's (`detail` repeats the key) are the real ones.
 */
describe('logger: errors of failed statements', () => {
  const testDb = useTestDatabase();

  let inserts = 0;
  async function failedInsert(): Promise<unknown> {
    const repository = new EventRepository(testDb.database);
    const row: EventRow = {
      id: `SECRET-ID-${++inserts}`,
      membershipId: 'm-log',
      eventType: 'UserCreated',
      utilizerId: 'system',
      document: { marker: 'SECRET-DOCUMENT-9c1e' },
      prior: null,
      eventTime: new Date(),
    };
    await repository.insertBatch([row]);
    return repository.insertBatch([row]).then(
      () => {
        throw new Error('the second insert of one id should fail');
      },
      (error: unknown) => error,
    );
  }

  it('logs the statement and the cause, without the parameters or the key in the detail', async () => {
    const error = await failedInsert();
    const { logger, lines, text } = captureLog();
    logger.error({ err: error }, 'insert failed');

    expect(text()).not.toContain('SECRET-');
    const [line] = lines();
    expect(line.err).toMatchObject({
      type: 'DrizzleQueryError',
      message: expect.stringContaining('insert into "events"'),
      stack: expect.stringContaining('    at '),
      cause: { code: '23505', message: expect.stringContaining('duplicate key') },
    });
  });

  it('keeps the parameters out when the failed statement is the cause of another error', async () => {
    const wrapped = new Error('could not store the event', { cause: await failedInsert() });
    const { logger, lines, text } = captureLog();
    logger.error({ err: wrapped }, 'wrapped');

    expect(text()).not.toContain('SECRET-');
    expect(lines()[0].err).toMatchObject({ type: 'Error', message: 'could not store the event', cause: { type: 'DrizzleQueryError' } });
  });
});
