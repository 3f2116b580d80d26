import { sql } from 'drizzle-orm';
import { openTestDatabase } from '../../test/support/database';
import type { Database } from '../database/database';
import { mailhooks, memberships, webhooks } from '../database/schema';
import { WebhookRepository } from '../webhooks/webhook.repository';
import { MailhookRepository } from './mailhook.repository';

/**
 * The mail and webhook dispatchers cache the promise of a membership's active hooks per event
 * type and await it once per event. A drizzle query is a lazy thenable that runs again on every
 * `then`: cached as such, it queried the database for every event (every TokenVerified). These
 * lookups must be real promises: awaited again, they answer what they answered the first time,
 * without a second query (a hook added meanwhile is seen when the cache entry expires).
 */
describe('active hook lookups run their query once', () => {
  let database: Database;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ database, close } = await openTestDatabase());
    await database.db.execute(sql`
      insert into ${memberships} (id, name, slug, secret_key, created_by) values ('m-1', 'One', 'one', 'secret', 'system')`);
  });

  afterAll(async () => {
    await close?.();
  });

  const mailhook = (id: string) => ({
    id,
    membershipId: 'm-1',
    name: id,
    slug: id,
    event: 'TokenVerified',
    mailProvider: 'smtp',
    fromAddress: 'from@example.com',
    mailSubject: 'subject',
    mailFormat: 'text' as const,
    mailTemplate: 'body',
    createdBy: 'system',
  });

  const webhook = (id: string) => ({
    id,
    membershipId: 'm-1',
    name: id,
    slug: id,
    event: 'TokenVerified',
    status: 'active' as const,
    tryCount: 1,
    request: { method: 'POST', url: 'http://127.0.0.1:9/hook' },
    createdBy: 'system',
  });

  it('mail hooks: awaiting the lookup again does not query again', async () => {
    await database.db.insert(mailhooks).values(mailhook('mh-1'));
    const lookup = new MailhookRepository(database).findActiveFor('m-1', 'TokenVerified');
    expect(await lookup).toHaveLength(1);
    await database.db.insert(mailhooks).values(mailhook('mh-2'));
    // A query run again would see the second hook.
    expect(await lookup).toHaveLength(1);
    expect(await new MailhookRepository(database).findActiveFor('m-1', 'TokenVerified')).toHaveLength(2);
  });

  it('webhooks: awaiting the lookup again does not query again', async () => {
    await database.db.insert(webhooks).values(webhook('wh-1'));
    const lookup = new WebhookRepository(database).findActiveFor('m-1', 'TokenVerified');
    expect(await lookup).toHaveLength(1);
    await database.db.insert(webhooks).values(webhook('wh-2'));
    expect(await lookup).toHaveLength(1);
    expect(await new WebhookRepository(database).findActiveFor('m-1', 'TokenVerified')).toHaveLength(2);
  });
});
