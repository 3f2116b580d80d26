import { sql } from 'drizzle-orm';
import { useTestDatabase } from '../../test/support/database';
import { queryRows } from '../database/database';
import { webhooks } from '../database/schema';
import { deliveriesOf, eventsFrom } from './event.repository';

/**
 * Every statement that writes events also queues their webhook deliveries (`deliveriesOf`). That
 * must cost one index probe per event whatever the number of webhooks in the database: with 20,000
 * active webhooks over 2,000 memberships (then ANALYZE), the plan probes webhooks_membership_event
 * and never reads the table whole. Before the lateral probe, the planner hashed all of them for
 * every event written (a seq scan of webhooks, 3.4 ms a statement).
 * Runs on the embedded database, or on the PostgreSQL server when TEST_DATABASE_URL is set.
 */
describe('webhook delivery probe of an event write', () => {
  const database = useTestDatabase();

  beforeAll(async () => {
    // The memberships themselves do not matter to the plan: the foreign key is off while loading.
    await database().db.transaction(async (tx) => {
      await tx.execute(sql`alter table ${webhooks} disable trigger all`);
      await tx.execute(sql`
        insert into ${webhooks} (id, membership_id, name, slug, event, status, try_count, request, created_by)
        select 'w-' || i, 'm-' || (i % 2000), 'hook', 'hook-' || i,
          (array['UserCreated', 'TokenGenerated', 'UserUpdated', 'TokenVerified'])[1 + i % 4], 'active', 3, '{}', 'admin'
        from generate_series(1, 20000) as i`);
      await tx.execute(sql`alter table ${webhooks} enable trigger all`);
    });
    await database().db.execute(sql`analyze ${webhooks}`);
  });


  it('probes the index once per event and never scans every webhook', async () => {
    const json = JSON.stringify([
      { id: 'e-1', membership_id: 'm-7', event_type: 'TokenVerified', utilizer_id: 'u-1', document: {}, prior: null, event_time: '2026-11-29T00:00:00Z' },
      { id: 'e-2', membership_id: 'm-8', event_type: 'UserCreated', utilizer_id: 'u-1', document: {}, prior: null, event_time: '2026-11-29T00:00:00Z' },
    ]);
    const rows = await queryRows<Record<string, string>>(database().db, sql`explain ${deliveriesOf(eventsFrom(json))}`);
    const plan = rows.map((row) => Object.values(row)[0]).join('\n');
    expect(plan).toContain('webhooks_membership_event');
    expect(plan).not.toMatch(/Seq Scan on webhooks|Hash/);
  });
});
