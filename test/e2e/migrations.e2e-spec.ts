import { Client } from 'pg';
import { startTestApp } from '../support/app';
import { createServerDatabase, serverUrl } from '../support/database';

const server = serverUrl();
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
        expect(Number(rows[0].count)).toBe(1);
      } finally {
        await client.end();
      }
    } finally {
      for (const app of apps) await app.close();
      await database.drop();
    }
  });
});
