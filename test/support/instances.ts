import { type Installation, setupInstallation } from './api';
import { startTestApp, type TestApp } from './app';
import { useStarted } from './use-started';

/** Whether TEST_DATABASE_URL names a PostgreSQL server: several instances can share only that (PGlite lives in one process). */
export const serverConfigured = Boolean(process.env.TEST_DATABASE_URL);

/**
 * `describe` when a server database is configured; otherwise the suite is skipped, and says so in
 * the run's output beside the skipped tests.
 */
export function describeWithServer(name: string, body: () => void): void {
  if (serverConfigured) {
    describe(name, body);
    return;
  }
  process.stdout.write(`"${name}": skipped; set TEST_DATABASE_URL to a PostgreSQL server to run it\n`);
  describe.skip(`${name} (skipped: TEST_DATABASE_URL is not set)`, body);
}

/** Two instances of the service on one database, as behind a load balancer; installed through A. */
export interface TwoInstances {
  a: TestApp;
  b: TestApp;
  install: Installation;
}

/** Starts two instances with `env` for the suite (closing B, then A, after it). */
export function useTwoInstances(env: Record<string, string> = {}): TwoInstances {
  return useStarted(
    'the two instances',
    async () => {
      const a = await startTestApp({ env });
      let b: TestApp | undefined;
      try {
        b = await startTestApp({ env, databaseUrl: a.databaseUrl });
        return { a, b, install: await setupInstallation(a) };
      } catch (error) {
        await b?.close();
        await a.close();
        throw error;
      }
    },
    async ({ a, b }) => {
      await b.close();
      await a.close();
    },
  );
}
