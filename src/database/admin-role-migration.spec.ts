import { PGlite } from '@electric-sql/pglite';
import { migrationStatements, migrationTags, runMigrationsUpTo } from '../../test/support/unit/migration-files';
import { adminPermissions } from '../roles/role.mapper';

/**
 * Migration 0007 gives admin roles made before mail hooks (and the other newer resources) the
 * permissions adminPermissions now holds, once, and touches no other role. Run on the embedded
 * database with the raw SQL files, in the order of the journal.
 */
const MIGRATION = '0007_admin_role_new_resources';

/** Permissions of an admin role as setup made them before mail hooks, providers and token code policies. */
const OLD_ERA = ['users.*', 'user-types.*', 'roles.*', 'applications.*', 'webhooks.*', 'events.*', 'tokens.*'];

describe(`migration ${MIGRATION}`, () => {
  let client: PGlite;
  const permissionsOf = async (id: string): Promise<string[]> =>
    (await client.query<{ permissions: string[] }>('select permissions from roles where id = $1', [id])).rows[0].permissions;
  const runMigration = async (): Promise<void> => {
    for (const statement of migrationStatements(MIGRATION)) await client.exec(statement);
  };

  beforeAll(async () => {
    client = new PGlite();
    await client.waitReady;
    expect(migrationTags).toContain(MIGRATION);
    await runMigrationsUpTo(client, MIGRATION);
    // Rows as an installation from before the newer resources holds them (earlier migrations already ran).
    const old = (extra: string[]): string => JSON.stringify([...OLD_ERA, ...extra]);
    await client.exec(`
      insert into memberships (id, name, slug, secret_key, is_system, created_by) values
        ('sys', 'System', 'system', 'k1', true, 'x'), ('tenant', 'Tenant', 'tenant', 'k2', false, 'x'), ('fresh', 'Fresh', 'fresh', 'k3', false, 'x');
      insert into roles (id, membership_id, name, slug, permissions, created_by) values
        ('sys-admin', 'sys', 'Admin', 'admin', '${old(['memberships.*'])}', 'x'),
        ('tenant-admin', 'tenant', 'Admin', 'admin', '${old(['memberships.read.tenant', 'memberships.update.tenant'])}', 'x'),
        ('fresh-admin', 'fresh', 'Admin', 'admin', '${JSON.stringify(adminPermissions('fresh', false))}', 'x'),
        ('reader', 'tenant', 'Reader', 'reader', '["users.read"]', 'x');
    `);
  });

  afterAll(async () => {
    await client.close();
  });

  it('gives every admin role the permissions adminPermissions holds for its membership', async () => {
    await runMigration();
    expect((await permissionsOf('sys-admin')).sort()).toEqual(adminPermissions('sys', true).sort());
    expect((await permissionsOf('tenant-admin')).sort()).toEqual(adminPermissions('tenant', false).sort());
    expect(await permissionsOf('tenant-admin')).toContain('mailhooks.*');
  });

  it('keeps the order of the entries a role had and adds each missing one once', async () => {
    const tenant = await permissionsOf('tenant-admin');
    expect(tenant.slice(0, OLD_ERA.length)).toEqual(OLD_ERA);
    expect(new Set(tenant).size).toBe(tenant.length);
  });

  it('leaves an admin role that has everything, and every other role, as they were', async () => {
    expect(await permissionsOf('fresh-admin')).toEqual(adminPermissions('fresh', false));
    expect(await permissionsOf('reader')).toEqual(['users.read']);
  });

  it('changes nothing when it runs again', async () => {
    const before = (await client.query('select id, permissions from roles order by id')).rows;
    await runMigration();
    expect((await client.query('select id, permissions from roles order by id')).rows).toEqual(before);
  });
});
