import { createHash, randomBytes } from 'node:crypto';
import { linkSync, openAsBlob, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Client } from 'pg';
import { MIGRATIONS_FOLDER, migrateEmbedded, migrateServer } from '../../src/database/database';

/**
 * Migrated databases for test apps to start from, one per migration set, instead of migrating a
 * fresh database at every boot.
 *
 * Embedded: a fresh PGlite runs initdb (about 2 s of CPU, most of an embedded app's boot) and then
 * every migration; loading a data-directory image of a migrated one takes a fraction of that.
 * Server: CREATE DATABASE ... TEMPLATE of a migrated database takes about a third of creating an
 * empty one and migrating it.
 *
 * Either is built once, by the first test file that needs it, under a name that hashes the
 * migration files, the PGlite version and the embedded image's settings, so a changed migration
 * builds a new one while files running in parallel (and later runs) reuse it. The app still runs
 * its migrations on what it starts from: they find nothing to apply, and one missing would be
 * applied (and fail a test) as in production. Migrating from scratch stays tested: the
 * child-process tests (startup, graceful-shutdown, mail-tls) boot the built service on fresh databases,
 * and migrations.e2e-spec.ts starts three instances at once on an empty server database.
 */

/** Every file under the migrations folder (the SQL files and drizzle's journal), in a fixed order. */
function migrationFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .map((name) => join(folder, name))
    .filter((path) => statSync(path).isFile())
    .sort();
}

/**
 * How the embedded image differs from a service's own fresh database, to boot in a fraction of
 * the CPU (a boot's median 1,067 ms → 490 ms with the first two; with the image read at each boot,
 * 801 ms → 466 ms without the templates, and 365 ms from a file-backed Blob, 2026-12-02):
 * - initdb's one 16 MB WAL segment, 40% of the image and copied at every boot, becomes 1 MB ones;
 * - the shared buffers, initialised at every start, are 16 MB instead of 128 (a test's data fits
 *   many times over);
 * - template0 and template1 are dropped (7.4 MB each, half of what was left): CREATE DATABASE is
 *   all that reads them, and neither the service nor a test sends it to an embedded database.
 * None changes what a query answers or how it is planned (the planner reads effective_cache_size,
 * not shared_buffers). The service connects to the database `postgres`, as PGlite does by default.
 */
const IMAGE_INITDB_PARAMS = ['--wal-segsize=1'];
const IMAGE_SETTINGS = [
  "alter system set shared_buffers = '16MB'",
  "update pg_database set datistemplate = false where datname in ('template0', 'template1')",
  'drop database template0',
  'drop database template1',
];

let hashed: string | undefined;

/** Names the migration set, the PGlite version (whose data directory format the image is) and the image's settings. */
function migrationsHash(): string {
  if (hashed) return hashed;
  const hash = createHash('sha256');
  // The package exports no package.json; it sits beside dist/, where the entry point resolves.
  const pglite = JSON.parse(readFileSync(join(dirname(require.resolve('@electric-sql/pglite')), '..', 'package.json'), 'utf8')) as { version: string };
  hash.update(`pglite ${pglite.version}\n`);
  hash.update(`${IMAGE_INITDB_PARAMS.join(' ')}\n${IMAGE_SETTINGS.join(';\n')}\n`);
  for (const path of migrationFiles(MIGRATIONS_FOLDER)) {
    hash.update(`${path.slice(MIGRATIONS_FOLDER.length)}\n`);
    hash.update(readFileSync(path));
  }
  hashed = hash.digest('hex').slice(0, 20);
  return hashed;
}

async function buildImage(path: string): Promise<void> {
  const client = new PGlite({ initDbStartParams: IMAGE_INITDB_PARAMS });
  try {
    await client.waitReady;
    await migrateEmbedded(client);
    // shared_buffers is written to postgresql.auto.conf, which the image carries to every boot.
    for (const statement of IMAGE_SETTINGS) await client.exec(statement);
    // Uncompressed (15 MB): gzipped (5 MB when it was 41), it loaded in ~0.7 s against ~0.5 s.
    const image = await client.dumpDataDir('none');
    // Written aside, then linked into place: a file reading the path never sees half an image, and
    // never sees it change (a Blob of the file refuses to read a file changed since it was opened).
    // Where another file's build got there first, its image stays and this one goes.
    const partial = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(partial, Buffer.from(await image.arrayBuffer()));
    try {
      linkSync(partial, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(partial);
    }
  } finally {
    await client.close();
  }
}

let image: Promise<Blob> | undefined;

/**
 * The migrated embedded database's image, built on first use; PGlite only reads it, so a file's apps
 * share one. A Blob backed by the file: each boot reads it once, where a Blob of the file's bytes
 * cost a read and two copies more per test file (100 ms of a boot's CPU). The file never changes
 * once linked into place (buildImage); another image has another name.
 */
export function embeddedImage(): Promise<Blob> {
  image ??= (async () => {
    const path = join(tmpdir(), `portcullis-test-image-${migrationsHash()}.tar`);
    try {
      statSync(path);
    } catch {
      await buildImage(path);
    }
    return openAsBlob(path, { type: 'application/x-tar' });
  })();
  return image;
}

/** Any fixed 64-bit number; held on the server's maintenance database while a template is built. */
const TEMPLATE_LOCK_KEY = 7_460_310_212;

const withDatabase = (baseUrl: string, name: string): string => {
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return url.toString();
};

/**
 * The name of the migrated template database on the server of `baseUrl`, built on first use.
 * Built under another name and renamed when complete, under an advisory lock: a file waiting for
 * it never copies half a template, and a build that died leaves nothing that looks finished.
 */
export async function serverTemplate(baseUrl: string): Promise<string> {
  const name = `portcullis_template_${migrationsHash()}`;
  const admin = new Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    const exists = async () => (await admin.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
    if (await exists()) return name;
    await admin.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    try {
      if (await exists()) return name;
      const building = `${name}_${randomBytes(4).toString('hex')}`;
      await admin.query(`create database ${building}`);
      const client = new Client({ connectionString: withDatabase(baseUrl, building) });
      await client.connect();
      try {
        await migrateServer(client);
      } finally {
        await client.end();
      }
      await admin.query(`alter database ${building} rename to ${name}`);
      return name;
    } finally {
      await admin.query('select pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]);
    }
  } finally {
    await admin.end();
  }
}
