import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';

/**
 * For migration specs: the raw SQL files, read and run as drizzle's migrator runs them (split at
 * its statement breakpoints, in the order of the journal), on an embedded database of the spec's.
 */
const MIGRATIONS = join(__dirname, '..', '..', '..', 'src', 'database', 'migrations');

/** The migrations' tags (file names without `.sql`), in the order of the journal. */
export const migrationTags: readonly string[] = (
  JSON.parse(readFileSync(join(MIGRATIONS, 'meta', '_journal.json'), 'utf8')) as { entries: { tag: string }[] }
).entries.map((entry) => entry.tag);

/** The statements of one migration. */
export function migrationStatements(tag: string): string[] {
  return readFileSync(join(MIGRATIONS, `${tag}.sql`), 'utf8')
    .split('--> statement-breakpoint')
    .map((statement) => statement.trim())
    .filter(Boolean);
}

/** Runs migrations in journal order: those before `tag`, or with `through`, `tag` as well. */
export async function runMigrationsUpTo(client: PGlite, tag: string, options: { through?: boolean } = {}): Promise<void> {
  const at = migrationTags.indexOf(tag);
  if (at < 0) throw new Error(`no migration ${tag} in the journal`);
  for (const each of migrationTags.slice(0, options.through ? at + 1 : at)) {
    for (const statement of migrationStatements(each)) await client.exec(statement);
  }
}
