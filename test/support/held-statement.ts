import { Client } from 'pg';
import { type ApiCaller, createWebhook, eventually } from './api';
import type { TestApp } from './app';

/**
 * Runs two requests so that the second meets the first's statement under way: `first` runs until
 * its statement that records `eventType` is held at its very end, with the row locks it took; then
 * `second`, which either waits for those locks (a statement of it is held too) or is over; then
 * both go on. Answers both answers. For tests of what runs while another change is under way;
 * server database only (PGlite runs one statement at a time).
 *
 * How a statement is held: a webhook on `eventType` (pointing at port 9 of loopback, where nothing
 * listens: its calls fail) makes such a statement store a delivery, whose foreign key check waits
 * for the membership's row, which this locks.
 */
export async function overlapWithHeldStatement<A, B>(
  t: TestApp,
  admin: ApiCaller,
  eventType: string,
  first: () => PromiseLike<A>,
  second: () => PromiseLike<B>,
): Promise<[A, B]> {
  await createWebhook(t, admin, 'http://127.0.0.1:9/hook', { event: eventType });
  const database = new Client({ connectionString: t.databaseUrl });
  await database.connect();
  const waitingOnLocks = async (): Promise<number> =>
    (await database.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows[0].n;
  const until = (count: number, done: () => boolean = () => false) =>
    eventually(async () => (done() || (await waitingOnLocks()) === count ? true : undefined), `${count} statements waiting on a lock`, 1_500);
  let held = false;
  const release = async () => {
    if (!held) return;
    held = false;
    await database.query('commit');
  };
  try {
    await database.query('begin');
    await database.query('select 1 from memberships where id = $1 for update', [admin.membershipId]);
    held = true;
    const firstAnswer = Promise.resolve(first());
    await until(1);
    let secondOver = false;
    const secondAnswer = Promise.resolve(second()).finally(() => (secondOver = true));
    await until(2, () => secondOver);
    await release();
    return await Promise.all([firstAnswer, secondAnswer]);
  } finally {
    await release().finally(() => database.end());
  }
}
