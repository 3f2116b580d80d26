import { PGlite } from '@electric-sql/pglite';
import { runMigrationsUpTo } from '../../test/support/unit/migration-files';

/**
 * Migration 0009 drops the foreign keys of `token_sessions` to its membership and user: every
 * insert took a key-share lock on the tenant's one membership row through them. A record still
 * cannot outlive its user or membership: its session's key cascades from both. Run on the
 * embedded database with the raw SQL files, through 0009.
 */

describe('migration 0009_token_sessions_without_owner_keys', () => {
  let client: PGlite;
  const count = async (table: string, id: string): Promise<number> =>
    (await client.query<{ n: number }>(`select count(*)::int as n from ${table} where id = $1`, [id])).rows[0].n;

  beforeAll(async () => {
    client = new PGlite();
    await client.waitReady;
    await runMigrationsUpTo(client, '0009_token_sessions_without_owner_keys', { through: true });
    await client.exec(`
      insert into memberships (id, name, slug, secret_key, created_by) values ('m1', 'M1', 'm1', 'k', 'x'), ('m2', 'M2', 'm2', 'k', 'x');
      insert into users (id, membership_id, username, email_address, password_hash, created_by) values
        ('u1', 'm1', 'u1', 'u1@x', 'h', 'x'), ('u2', 'm1', 'u2', 'u2@x', 'h', 'x'), ('u3', 'm2', 'u3', 'u3@x', 'h', 'x');
      insert into sessions (id, membership_id, user_id) values ('s1', 'm1', 'u1'), ('s2', 'm1', 'u2'), ('s3', 'm2', 'u3');
      insert into token_sessions (id, session_id, membership_id, user_id, kind, access_jti, access_expires_at, expires_at) values
        ('t1', 's1', 'm1', 'u1', 'pair', 'j1', now(), now()),
        ('t2', 's2', 'm1', 'u2', 'pair', 'j2', now(), now()),
        ('t3', 's3', 'm2', 'u3', 'pair', 'j3', now(), now());
    `);
  });

  afterAll(async () => {
    await client.close();
  });

  it('leaves token_sessions one foreign key: its session', async () => {
    const { rows } = await client.query<{ name: string }>(
      `select conname as name from pg_constraint where conrelid = 'token_sessions'::regclass and contype = 'f' order by conname`,
    );
    expect(rows).toEqual([{ name: 'token_sessions_session_id_sessions_id_fk' }]);
  });

  it("deletes a user's token records with the user, through its sessions", async () => {
    await client.query(`delete from users where id = 'u1'`);
    expect([await count('sessions', 's1'), await count('token_sessions', 't1')]).toEqual([0, 0]);
    expect(await count('token_sessions', 't2')).toBe(1);
  });

  it("deletes a membership's token records with the membership, and no other's", async () => {
    await client.query(`delete from memberships where id = 'm1'`);
    expect(await count('token_sessions', 't2')).toBe(0);
    expect(await count('token_sessions', 't3')).toBe(1);
  });
});
