import { Client } from 'pg';
import { type ApiCaller, createWebhook, eventually } from './api';
import type { TestApp } from './app';

/**
 * Holds the service's statements that record `eventType` at their very end, with the row locks
 * they took, until `release`: a webhook on that type (pointing at port 9 of loopback, where nothing
 * listens: its calls fail) makes such a statement store a delivery, whose foreign key check waits
 * for the membership's row, which this locks. For tests of what runs while another change is under
 * way; server database only (PGlite runs one statement at a time).
 */
export async function holdStatementsRecording(t: TestApp, admin: ApiCaller, eventType: string) {
  await createWebhook(t, admin, 'http://127.0.0.1:9/hook', { event: eventType });
  const database = new Client({ connectionString: t.databaseUrl });
  await database.connect();
  await database.query('begin');
  await database.query('select 1 from memberships where id = $1 for update', [admin.membershipId]);
  let held = true;
  const waitingOnLocks = async (): Promise<number> =>
    (await database.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows[0].n;
  return {
    /** Until `count` statements wait on a lock, or `done()` says there is nothing more to wait for. */
    async until(count: number, done: () => boolean = () => false): Promise<void> {
      await eventually(async () => (done() || (await waitingOnLocks()) === count ? true : undefined), `${count} statements waiting on a lock`, 1_500);
    },
    /** Lets the held statements go on (again: nothing). */
    async release(): Promise<void> {
      if (!held) return;
      held = false;
      try {
        await database.query('commit');
      } finally {
        await database.end();
      }
    },
  };
}
