import { asc, eq } from 'drizzle-orm';
import { useTestDatabase } from '../../test/support/database';
import { events, type EventRow } from '../database/schema';
import { EventRepository } from './event.repository';

/**
 * The group-commit insert sends the whole batch as one JSON parameter. Ids and documents must come
 * back exactly as written, whatever characters they hold (quotes, backslashes, braces, unicode).
 * Runs on the embedded database, or on the PostgreSQL server when TEST_DATABASE_URL is set.
 */
describe('EventRepository.insertBatch', () => {
  const database = useTestDatabase();
  let repository: EventRepository;

  beforeAll(async () => {
    repository = new EventRepository(database());
  });


  const row = (n: number, document: Record<string, unknown>, prior: Record<string, unknown> | null = null): EventRow => ({
    id: `ev-${n}`,
    membershipId: 'm-batch',
    eventType: 'UserUpdated',
    utilizerId: `u-"${n}"\\`,
    document,
    prior,
    eventTime: new Date(Date.UTC(2026, 0, 1, 0, 0, n, 123)),
  });

  it('stores a batch of events with awkward documents exactly', async () => {
    const rows = [
      row(1, { quote: 'say "hi"', backslash: 'C:\\temp\\', braces: '{a,b}', comma: 'a,b', nul: 'x\u0001y' }, { before: null }),
      row(2, { unicode: 'zoë ☃ 𝄞', nested: { list: [1, '2', null, { deep: ['{}', '""'] }] }, empty: '' }),
      row(3, { sql: "'); drop table events; --", newline: 'a\nb\tc' }, { n: 1.5, t: true }),
      row(4, {}),
      { ...row(6, { key: 'value' }, null), id: 'ev-6 "quoted" \\ {brace}', eventType: 'User"Updated' },
    ];
    await repository.insertBatch(rows);
    const stored = await database().db.select().from(events).where(eq(events.membershipId, 'm-batch')).orderBy(asc(events.id));
    expect(stored).toEqual(rows);
  });

  it('stores a batch of read events (committed unflushed) exactly as the others', async () => {
    const rows = [
      { ...row(7, { quote: 'say "hi"', nested: { list: [1, '{}', null] } }), membershipId: 'm-read' },
      { ...row(8, { unicode: 'zoë ☃ 𝄞' }, { n: 2 }), membershipId: 'm-read', eventType: 'TokenVerified' },
    ];
    await repository.insertReadBatch(rows);
    await repository.insertReadBatch([]);
    const stored = await database().db.select().from(events).where(eq(events.membershipId, 'm-read')).orderBy(asc(events.id));
    expect(stored).toEqual(rows);
  });

  it('stores a single event and does nothing for none', async () => {
    await repository.insertBatch([]);
    const one = { ...row(5, { only: 'one' }), membershipId: 'm-single' };
    await repository.insertBatch([one]);
    expect(await database().db.select().from(events).where(eq(events.membershipId, 'm-single'))).toEqual([one]);
  });
});
