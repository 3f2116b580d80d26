import { openTestDatabase } from '../database';
import type { Database } from '../../../src/database/database';

/**
 * For a spec's describe block: opens a fresh test database before its tests (the PostgreSQL
 * server when TEST_DATABASE_URL is set, the embedded one otherwise), lets `seed` fill it, and
 * closes it after them. Tests read `.database`, which exists once beforeAll has run.
 */
export function useTestDatabase(seed?: (database: Database) => Promise<void>): { readonly database: Database } {
  let opened: Awaited<ReturnType<typeof openTestDatabase>> | undefined;
  beforeAll(async () => {
    opened = await openTestDatabase();
    await seed?.(opened.database);
  });
  afterAll(async () => {
    await opened?.close();
  });
  return {
    get database(): Database {
      if (!opened) throw new Error('the test database is opened in beforeAll');
      return opened.database;
    },
  };
}
