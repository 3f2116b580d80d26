import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client } from 'pg';
import { type Database, openDatabase } from '../../src/database/database';
import { embeddedImage, serverTemplate } from './migrated-template';

/** The line that keeps a test file out of CI's pass on the PostgreSQL server (.ci/run). */
const SERVER_PASS_NONE = /^\/\/ server pass: none/m;

/**
 * When TEST_DATABASE_URL points at a PostgreSQL server, every test app gets a database of its
 * own on it (created here, dropped on close); otherwise each uses an in-memory embedded one.
 * A file marked "server pass: none" claims that none of its services uses this database, and CI
 * runs it on the embedded pass only: asking for the server there fails, so the claim stays true.
 */
export function serverUrl(): string | undefined {
  const url = process.env.TEST_DATABASE_URL || undefined;
  if (url && markedServerPassNone()) {
    throw new Error(`${expect.getState().testPath} is marked "server pass: none", which CI's pass on the PostgreSQL server leaves out, yet asks for that server`);
  }
  return url;
}

/** Jest loads this module afresh for each test file: the file is read once. */
let marked: boolean | undefined;
function markedServerPassNone(): boolean {
  const testPath = expect.getState().testPath;
  marked ??= testPath !== undefined && SERVER_PASS_NONE.test(readFileSync(testPath, 'utf8'));
  return marked;
}

/**
 * A database of its own on the server: empty, or with `migrated` a copy of the migrated template
 * (./migrated-template.ts), which an app starts on without running any migration.
 */
export async function createServerDatabase(baseUrl: string, options: { migrated?: boolean } = {}): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `portcullis_t_${randomBytes(6).toString('hex')}`;
  const template = options.migrated ? await serverTemplate(baseUrl) : 'template1';
  // CREATE DATABASE copies its template and fails while another session copies it too: retry briefly.
  for (let attempt = 1; ; attempt++) {
    const admin = new Client({ connectionString: baseUrl });
    try {
      await admin.connect();
      await admin.query(`create database ${name} template ${template}`);
      break;
    } catch (error) {
      if (attempt >= 10) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    } finally {
      await admin.end().catch(() => undefined);
    }
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new Client({ connectionString: baseUrl });
      await client.connect();
      try {
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * A migrated database for a database-level spec: a fresh one on the server when
 * TEST_DATABASE_URL is set, else an in-memory embedded one (each from ./migrated-template.ts).
 * `close` also drops the server's.
 */
export async function openTestDatabase(): Promise<{ database: Database; close: () => Promise<void> }> {
  const server = serverUrl();
  if (!server) {
    const database = await openDatabase({ kind: 'embedded', dataDir: null, image: await embeddedImage() });
    return { database, close: () => database.close() };
  }
  const created = await createServerDatabase(server, { migrated: true });
  const database = await openDatabase({ kind: 'server', url: created.url, poolSize: 2 });
  return {
    database,
    close: async () => {
      await database.close();
      await created.drop();
    },
  };
}

/**
 * `openTestDatabase` for the specs of one `describe`: opened before them, closed (the server's
 * dropped) after them. Call it in the `describe`; its specs read the database through the getter.
 */
export function useTestDatabase(): () => Database {
  let opened: { database: Database; close: () => Promise<void> } | undefined;
  beforeAll(async () => {
    opened = await openTestDatabase();
  });
  afterAll(async () => {
    await opened?.close();
  });
  return () => {
    if (!opened) throw new Error('The test database is opened in beforeAll: read it inside a spec');
    return opened.database;
  };
}
