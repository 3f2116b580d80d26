import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { startTestApp } from '../support/app';
import { createServerDatabase, serverUrl } from '../support/database';

const server = serverUrl();
/** The migrations the build ships, from drizzle's journal. */
const shipped = (JSON.parse(readFileSync(join(__dirname, '../../src/database/migrations/meta/_journal.json'), 'utf8')) as { entries: { tag: string }[] }).entries;
const describeWithServer = server ? describe : describe.skip;
if (!server) console.warn('migrations: skipped, TEST_DATABASE_URL is not set (CI sets it)');

describeWithServer('migrations on a PostgreSQL server', () => {
  it('three instances starting at once on an empty database apply the migrations exactly once', async () => {
    const database = await createServerDatabase(server!);
    const apps = await Promise.all([1, 2, 3].map(() => startTestApp({ databaseUrl: database.url })));
    try {
      for (const app of apps) await app.http().get('/healthcheck').expect(200);
      const client = new Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ count: string }>('select count(*) from drizzle.__drizzle_migrations');
        expect(shipped.length).toBeGreaterThan(1);
        expect(Number(rows[0].count)).toBe(shipped.length);
      } finally {
        await client.end();
      }
    } finally {
      for (const app of apps) await app.close();
      await database.drop();
    }
  });
});
