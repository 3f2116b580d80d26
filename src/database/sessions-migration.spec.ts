import { PGlite } from '@electric-sql/pglite';
import { migrationStatements, runMigrationsUpTo } from '../../test/support/unit/migration-files';

/**
 * Migration 0002 gives every existing token record a sign-in session: a pair its own, a scoped
 * token its parent pair's (or its own when the parent was swept). A session is revoked when its
 * first record was, except by rotation. Run on the embedded database with the raw SQL files.
 */
describe('migration 0002_sessions', () => {
  let client: PGlite;

  beforeAll(async () => {
    client = new PGlite();
    await client.waitReady;
    await runMigrationsUpTo(client, '0002_sessions');
    await client.exec(`
      insert into memberships (id, name, slug, secret_key, created_by) values ('m', 'M', 'm', 'k', 'x');
      insert into users (id, membership_id, username, email_address, password_hash, created_by) values ('u', 'm', 'u', 'u@x', 'h', 'x');
      insert into token_sessions (id, membership_id, user_id, kind, parent_id, access_jti, access_expires_at, expires_at, revoked_at, revoke_reason) values
        ('live', 'm', 'u', 'pair', null, 'j1', now() + interval '1 hour', now() + interval '1 day', null, null),
        ('rotated', 'm', 'u', 'pair', null, 'j2', now() + interval '1 hour', now() + interval '1 day', now(), 'refreshed'),
        ('logged-out', 'm', 'u', 'pair', null, 'j3', now() + interval '1 hour', now() + interval '1 day', now(), 'revoked'),
        ('child', 'm', 'u', 'scoped', 'live', 'j4', now() + interval '2 days', now() + interval '2 days', null, null),
        ('orphan', 'm', 'u', 'scoped', 'swept', 'j5', now() + interval '1 hour', now() + interval '1 hour', null, null);
    `);
    for (const statement of migrationStatements('0002_sessions')) await client.exec(statement);
  });

  afterAll(async () => {
    await client.close();
  });

  it('puts each record in a session: a pair its own, a scoped token its parent pair\'s or its own', async () => {
    const { rows } = await client.query<{ id: string; session_id: string }>('select id, session_id from token_sessions order by id');
    expect(rows).toEqual([
      { id: 'child', session_id: 'live' },
      { id: 'live', session_id: 'live' },
      { id: 'logged-out', session_id: 'logged-out' },
      { id: 'orphan', session_id: 'orphan' },
      { id: 'rotated', session_id: 'rotated' },
    ]);
  });

  it('revokes a session only when its first record was revoked other than by rotation', async () => {
    const { rows } = await client.query<{ id: string; revoked: boolean; reason: string | null }>(
      'select id, revoked_at is not null as revoked, revoke_reason as reason from sessions order by id',
    );
    expect(rows).toEqual([
      { id: 'live', revoked: false, reason: null },
      { id: 'logged-out', revoked: true, reason: 'revoked' },
      { id: 'orphan', revoked: false, reason: null },
      { id: 'rotated', revoked: false, reason: null },
    ]);
  });

  it('leaves session_id required and tied to its session', async () => {
    await expect(
      client.query(`insert into token_sessions (id, membership_id, user_id, kind, access_jti, access_expires_at, expires_at)
        values ('x', 'm', 'u', 'pair', 'j', now(), now())`),
    ).rejects.toThrow(/session_id/);
    await expect(
      client.query(`insert into token_sessions (id, session_id, membership_id, user_id, kind, access_jti, access_expires_at, expires_at)
        values ('x', 'nope', 'm', 'u', 'pair', 'j', now(), now())`),
    ).rejects.toThrow(/foreign key/);
  });
});
