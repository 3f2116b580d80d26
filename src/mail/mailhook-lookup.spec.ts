import { sql } from 'drizzle-orm';
import { useTestDatabase } from '../../test/support/unit/test-database';
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
  const testDb = useTestDatabase(async (database) => {
    await database.db.execute(sql`
      insert into ${memberships} (id, name, slug, secret_key, created_by) values ('m-1', 'One', 'one', 'secret', 'system')`);
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

  // Each kind of hook: how to store one, and its repository's lookup of the active ones.
  const kinds = {
    'mail hooks': {
      add: (id: string) => testDb.database.db.insert(mailhooks).values(mailhook(id)),
      lookup: () => new MailhookRepository(testDb.database).findActiveFor('m-1', 'TokenVerified'),
    },
    webhooks: {
      add: (id: string) => testDb.database.db.insert(webhooks).values(webhook(id)),
      lookup: () => new WebhookRepository(testDb.database).findActiveFor('m-1', 'TokenVerified'),
    },
  };

  it.each(Object.keys(kinds) as (keyof typeof kinds)[])('%s: awaiting the lookup again does not query again', async (kind) => {
    const { add, lookup } = kinds[kind];
    await add(`${kind}-1`);
    const first = lookup();
    expect(await first).toHaveLength(1);
    await add(`${kind}-2`);
    // A query run again would see the second hook.
    expect(await first).toHaveLength(1);
    expect(await lookup()).toHaveLength(2);
  });
});
