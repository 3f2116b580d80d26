import { sql } from 'drizzle-orm';
import { useTestDatabase } from '../../test/support/database';
import { TokenSessionRepository } from './token-session.repository';

/**
 * The token operations' lookups go to the database together, as many in one statement as arrived
 * while the last one ran (TokenSessionRepository.findForVerification). Each caller must get what
 * its own lookup would have found, whatever else shares the statement.
 * Runs on the embedded database, or on the PostgreSQL server when TEST_DATABASE_URL is set.
 */
describe('token lookups sent together', () => {
  const database = useTestDatabase();

  beforeAll(async () => {
    // Five memberships; user u-i with session s-i and token record t-i in membership m-(i % 5).
    await database().db.transaction(async (tx) => {
      await tx.execute(sql`insert into memberships (id, name, slug, secret_key, created_by)
        select 'm-' || i, 'M' || i, 'm-' || i, 'key-' || i, 'test' from generate_series(0, 4) as i`);
      await tx.execute(sql`insert into users (id, membership_id, username, email_address, password_hash, created_by)
        select 'u-' || i, 'm-' || (i % 5), 'user' || i, 'user' || i || '@example.test', 'x', 'test' from generate_series(0, 9) as i`);
      await tx.execute(sql`insert into sessions (id, membership_id, user_id, revoked_at)
        select 's-' || i, 'm-' || (i % 5), 'u-' || i, case when i = 3 then now() end from generate_series(0, 9) as i`);
      await tx.execute(sql`insert into token_sessions (id, session_id, membership_id, user_id, kind, access_jti, access_expires_at, expires_at)
        select 't-' || i, 's-' || i, 'm-' || (i % 5), case when i = 4 then 'u-gone' else 'u-' || i end, 'pair', 'j-' || i,
          now() + interval '1 hour', now() + interval '1 day'
        from generate_series(0, 9) as i`);
    });
  });

  it('answers each lookup as it would have been answered alone, in any mix', async () => {
    const repository = new TokenSessionRepository(database());
    const lookups: [membershipId: string, tokenId: string][] = [
      ['m-1', 't-1'], // found
      ['m-2', 't-2'],
      ['m-2', 't-1'], // another membership's record: the membership, no record
      ['m-none', 't-1'], // no such membership: nothing
      ['m-3', 't-3'], // its sign-in session revoked
      ['m-4', 't-4'], // its user gone
      ['m-0', 't-missing'],
      ['m-2', 't-2'], // the same token twice in one statement
      ['m-1', 't-6'],
    ];
    const alone = [];
    for (const [membershipId, tokenId] of lookups) alone.push(await repository.findForVerification(membershipId, tokenId));
    // Added together: the first is sent alone, the others in one statement while it runs.
    const together = await Promise.all(lookups.map(([membershipId, tokenId]) => repository.findForVerification(membershipId, tokenId)));

    expect(together).toEqual(alone);
    expect(together.map((found) => found && [found.membership.id, found.session?.id ?? null, found.family?.id ?? null, found.user?.id ?? null])).toEqual([
      ['m-1', 't-1', 's-1', 'u-1'],
      ['m-2', 't-2', 's-2', 'u-2'],
      ['m-2', null, null, null],
      undefined,
      ['m-3', 't-3', 's-3', 'u-3'],
      ['m-4', 't-4', 's-4', null],
      ['m-0', null, null, null],
      ['m-2', 't-2', 's-2', 'u-2'],
      ['m-1', 't-6', 's-6', 'u-6'],
    ]);
    // Each row read whole and typed: the membership's key, the dates, the user's JSON columns.
    expect(together[0]?.membership).toMatchObject({ id: 'm-1', secretKey: 'key-1', slug: 'm-1' });
    expect(together[4]?.family?.revokedAt).toBeInstanceOf(Date);
    expect(together[0]?.session?.accessExpiresAt).toBeInstanceOf(Date);
    expect(together[0]?.user).toMatchObject({ username: 'user1', permissions: [], isActive: true });
    expect(together[0]?.user?.createdAt).toBeInstanceOf(Date);
    expect(together[0]?.user).not.toHaveProperty('passwordHash');
  });
});
