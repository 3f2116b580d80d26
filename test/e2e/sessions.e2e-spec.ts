import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../../src/database/database';
import { tokenSessions } from '../../src/database/schema';
import { EventRecorder } from '../../src/events/event-recorder';
import { TokenSessionRepository } from '../../src/sessions/token-session.repository';
import { aroundPasswordCheck, bearer, createSignedInUser, eventsAbout, putBodyOf, signIn, useInstallation, usersPath } from '../support/api';

/**
 * Sessions: a sign-in, every pair refreshed from it and every scoped token made from any of its
 * access tokens. What ends a session, what ends every session of a user, and what stays ended.
 */
describe('sessions, revocation triggers and token families', () => {
  const suite = useInstallation();

  const me = (token: string) => suite.t.http().get('/me').set('Authorization', bearer(token));
  const expectRevoked = async (token: string) => {
    const res = await me(token);
    expect({ status: res.status, code: res.body.errorCode }).toEqual({ status: 401, code: 'TokenWasRevoked' });
  };
  const expectRefreshRevoked = async (refreshToken: string) => {
    const res = await suite.t.http().get('/refresh-token').set('Authorization', bearer(refreshToken));
    expect({ status: res.status, code: res.body.errorCode }).toEqual({ status: 401, code: 'RefreshTokenWasRevoked' });
  };
  const expectWorking = async (token: string) => {
    const res = await me(token);
    expect({ status: res.status, code: res.body.errorCode }).toEqual({ status: 200, code: undefined });
  };

  async function scopedFrom(accessToken: string, scopes: string[]): Promise<string> {
    const res = await suite.t.http().post('/generate-token').set('Authorization', bearer(accessToken)).send({ scopes });
    if (res.status !== 201) throw new Error(`scoped token failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.access_token as string;
  }

  async function refresh(refreshToken: string): Promise<{ accessToken: string; refreshToken: string }> {
    const res = await suite.t.http().get('/refresh-token').set('Authorization', bearer(refreshToken));
    if (res.status !== 201) throw new Error(`refresh failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { accessToken: res.body.access_token, refreshToken: res.body.refresh_token };
  }

  const activeTokens = (where: object) =>
    suite.t.http().post(`/memberships/${suite.admin.membershipId}/active-tokens/_query`).set('Authorization', suite.admin.auth).send({ where });

  const newUser = () => createSignedInUser(suite.t, suite.admin, { permissions: ['events.read', 'users.read'] });

  describe('inactivation by any route', () => {
    it('PUT with is_active false revokes every session of the user (issue 15.2)', async () => {
      const { user, session } = await newUser();
      const second = await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
      const put = await suite.t.http().put(`${usersPath(suite.admin.membershipId)}/${user._id}`).set('Authorization', suite.admin.auth).send(putBodyOf(user, { is_active: false }));
      expect(put.status).toBe(200);
      await expectRevoked(session.accessToken);
      await expectRevoked(second.accessToken);
    });

    it('reactivation by PUT does not bring back the tokens a PUT inactivation ended', async () => {
      const { user, session } = await newUser();
      const path = `${usersPath(suite.admin.membershipId)}/${user._id}`;
      await suite.t.http().put(path).set('Authorization', suite.admin.auth).send(putBodyOf(user, { is_active: false })).expect(200);
      await suite.t.http().put(path).set('Authorization', suite.admin.auth).send(putBodyOf(user, { is_active: true })).expect(200);
      await expectRevoked(session.accessToken);
      await expectRefreshRevoked(session.refreshToken);
    });

    it('reactivation after the freeze route keeps the frozen tokens dead; a new sign-in works', async () => {
      const { user, session } = await newUser();
      const scoped = await scopedFrom(session.accessToken, ['events.read']);
      await suite.t.http().post(`${usersPath(suite.admin.membershipId)}/${user._id}/freeze`).set('Authorization', suite.admin.auth).expect(200);
      await suite.t.http().post(`${usersPath(suite.admin.membershipId)}/${user._id}/activate`).set('Authorization', suite.admin.auth).expect(200);
      await expectRevoked(session.accessToken);
      await expectRevoked(scoped);
      const again = await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
      await expectWorking(again.accessToken);
    });
  });

  describe('scoped tokens belong to their parent session, across refreshes', () => {
    it('revoking the session after a refresh ends the scoped tokens made from the first access token (issue 15.3)', async () => {
      const { session } = await newUser();
      const scoped = await scopedFrom(session.accessToken, ['events.read']);
      const next = await refresh(session.refreshToken);
      await expectWorking(scoped);
      await suite.t.http().get('/revoke-token').set('Authorization', bearer(next.accessToken)).expect(204);
      await expectRevoked(next.accessToken);
      await expectRevoked(scoped);
    });

    it('DELETE active-tokens/{id} of the refreshed pair ends the whole session, scoped tokens included', async () => {
      const { user, session } = await newUser();
      const scoped = await scopedFrom(session.accessToken, ['events.read']);
      const next = await refresh(session.refreshToken);
      const listing = await activeTokens({ user_id: user._id, kind: 'pair' });
      expect(listing.status).toBe(200);
      expect(listing.body.items).toHaveLength(1);
      await suite.t.http().delete(`/memberships/${suite.admin.membershipId}/active-tokens/${listing.body.items[0]._id}`).set('Authorization', suite.admin.auth).expect(204);
      await expectRevoked(next.accessToken);
      await expectRevoked(scoped);
      const left = await activeTokens({ user_id: user._id });
      expect(left.body.items).toEqual([]);
    });

    it("DELETE active-tokens/{id} of a scoped token's record ends that token only", async () => {
      const { user, session } = await newUser();
      const scoped = await scopedFrom(session.accessToken, ['events.read']);
      const listing = await activeTokens({ user_id: user._id, kind: 'scoped' });
      expect(listing.body.items).toHaveLength(1);
      await suite.t.http().delete(`/memberships/${suite.admin.membershipId}/active-tokens/${listing.body.items[0]._id}`).set('Authorization', suite.admin.auth).expect(204);
      await expectRevoked(scoped);
      await expectWorking(session.accessToken);
    });

    it('a scoped token revokes itself and only itself', async () => {
      const { session } = await newUser();
      const scoped = await scopedFrom(session.accessToken, ['events.read']);
      const sibling = await scopedFrom(session.accessToken, ['users.read']);
      await suite.t.http().post('/revoke-token').send({ token: scoped }).expect(204);
      await expectRevoked(scoped);
      await expectWorking(session.accessToken);
      await expectWorking(sibling);
    });
  });

  describe('refresh token reuse', () => {
    it('revokes the whole session, the pair issued from the reused token included (issue 15.4)', async () => {
      const { session } = await newUser();
      const stolen = await refresh(session.refreshToken);
      await expectRefreshRevoked(session.refreshToken);
      await expectRevoked(stolen.accessToken);
      await expectRefreshRevoked(stolen.refreshToken);
    });

    it('records TokenRevoked with reason refresh_token_reuse, without token strings or digests', async () => {
      const { user, session } = await newUser();
      const scoped = await scopedFrom(session.accessToken, ['events.read']);
      const next = await refresh(session.refreshToken);
      await suite.t.http().get('/refresh-token').set('Authorization', bearer(session.refreshToken)).expect(401);
      await expectRevoked(scoped);
      const revoked = (await eventsAbout(suite.t, suite.admin.membershipId, 'TokenRevoked', user._id)).filter((e) => e.document.reason === 'refresh_token_reuse');
      // The pair issued by the refresh and the scoped token: one event each.
      expect(revoked).toHaveLength(2);
      const text = JSON.stringify(revoked);
      for (const secret of [session.accessToken, session.refreshToken, next.accessToken, next.refreshToken, scoped]) {
        for (const part of secret.split('.')) expect(text).not.toContain(part);
      }
    });

    it('a reused refresh token whose session already ended records nothing more', async () => {
      const { user, session } = await newUser();
      await refresh(session.refreshToken);
      await suite.t.http().get('/refresh-token').set('Authorization', bearer(session.refreshToken)).expect(401);
      const before = (await eventsAbout(suite.t, suite.admin.membershipId, 'TokenRevoked', user._id)).length;
      await suite.t.http().get('/refresh-token').set('Authorization', bearer(session.refreshToken)).expect(401);
      expect(await eventsAbout(suite.t, suite.admin.membershipId, 'TokenRevoked', user._id)).toHaveLength(before);
    });

    it('revoke=false is not rotation: the kept refresh token may be used again', async () => {
      const { session } = await newUser();
      const first = await suite.t.http().get('/refresh-token').query({ revoke: false }).set('Authorization', bearer(session.refreshToken));
      expect(first.status).toBe(201);
      const second = await suite.t.http().get('/refresh-token').set('Authorization', bearer(session.refreshToken));
      expect(second.status).toBe(201);
      await expectWorking(first.body.access_token);
      await expectWorking(second.body.access_token);
    });
  });

  describe('concurrent issuance in one session', () => {
    it('refreshes with revoke=false and scoped tokens of one session all succeed side by side', async () => {
      const { session } = await newUser();
      const results = await Promise.all([
        ...[1, 2, 3, 4, 5, 6].map(() => suite.t.http().post('/refresh-token').query({ revoke: false }).send({ token: session.refreshToken })),
        ...[1, 2, 3].map(() => suite.t.http().post('/generate-token').set('Authorization', bearer(session.accessToken)).send({ scopes: ['events.read'] })),
      ]);
      expect(results.map((r) => r.status)).toEqual(results.map(() => 201));
      for (const r of results) await expectWorking(r.body.access_token);
    });
  });

  describe('logout-all', () => {
    it('a scoped token cannot sign its user out everywhere: 403 AccessDenied, every session stays (issue 21.6)', async () => {
      const { session } = await newUser();
      const scoped = await scopedFrom(session.accessToken, ['events.read']);
      const res = await suite.t.http().get('/revoke-token').query({ 'logout-all': true }).set('Authorization', bearer(scoped));
      expect(res.status).toBe(403);
      expect(res.body.errorCode).toBe('AccessDenied');
      await expectWorking(session.accessToken);
      await expectWorking(scoped);
    });

    it('an unscoped token revokes every session of the user, refreshed and scoped tokens included', async () => {
      const { user, session } = await newUser();
      const other = await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
      const scoped = await scopedFrom(other.accessToken, ['events.read']);
      const otherNext = await refresh(other.refreshToken);
      await suite.t.http().post('/revoke-token').query({ 'logout-all': true }).send({ token: session.refreshToken }).expect(204);
      for (const token of [session.accessToken, otherNext.accessToken, scoped]) await expectRevoked(token);
      const refreshed = await suite.t.http().get('/refresh-token').set('Authorization', bearer(otherNext.refreshToken));
      expect(refreshed.body.errorCode).toBe('RefreshTokenWasRevoked');
      await expectWorking(suite.admin.accessToken);
    });
  });

  describe('issuance into a revoked session', () => {
    // What a refresh meets when the session is revoked between its check and its write.
    it('adds no token record to a revoked session', async () => {
      const { user, session } = await newUser();
      const claims = JSON.parse(Buffer.from(session.accessToken.split('.')[1], 'base64url').toString('utf8')) as { sid: string };
      await suite.t.http().post('/revoke-token').send({ token: session.accessToken }).expect(204);
      const tokenId = randomUUID();
      const now = new Date();
      const later = new Date(now.getTime() + 3_600_000);
      const recorder = suite.t.app.get(EventRecorder);
      const rows = recorder.prepare([{ membershipId: suite.admin.membershipId, eventType: 'TokenGenerated', utilizerId: user._id, document: {} }]);
      const stored = await suite.t.app.get(TokenSessionRepository).issue(
        { id: tokenId, sessionId: claims.sid, membershipId: suite.admin.membershipId, userId: user._id, kind: 'pair', accessJti: randomUUID(), accessExpiresAt: later, expiresAt: later, createdAt: now },
        rows,
        false,
      );
      expect(stored).toBe(false);
      const { db } = suite.t.app.get<Database>(DATABASE);
      expect(await db.select().from(tokenSessions).where(eq(tokenSessions.id, tokenId))).toEqual([]);
    });
  });

  describe('a sign-in whose password was checked before a user-wide change', () => {
    /**
     * Signs `user` in with its password, holding the sign-in right after its password check until
     * `meanwhile` has answered: what a sign-in meets when the change lands during its argon2 verify.
     */
    async function signInAround(user: { username: string; password: string }, meanwhile: () => Promise<void>) {
      const send = () =>
        suite.t
          .http()
          .post('/generate-token')
          .set('X-Service-Alias', suite.admin.membershipId)
          .send({ username: user.username, password: user.password })
          .then((res) => res);
      return aroundPasswordCheck(suite.t, send, meanwhile);
    }

    it('its user deleted meanwhile: 401 InvalidCredentials, never a 500', async () => {
      const { user } = await newUser();
      const res = await signInAround(user, async () => {
        await suite.t.http().delete(`${usersPath(suite.admin.membershipId)}/${user._id}`).set('Authorization', suite.admin.auth).expect(204);
      });
      expect({ status: res.status, code: res.body.errorCode }).toEqual({ status: 401, code: 'InvalidCredentials' });
    });

    it('its password changed meanwhile: the old password opens no session that outlives the change', async () => {
      const { user } = await newUser();
      const res = await signInAround(user, async () => {
        await suite.t
          .http()
          .put(`${usersPath(suite.admin.membershipId)}/${user._id}/change-password`)
          .set('Authorization', suite.admin.auth)
          .send({ password: 'changed while it signed in' })
          .expect(204);
      });
      expect({ status: res.status, code: res.body.errorCode }).toEqual({ status: 401, code: 'InvalidCredentials' });
      await signIn(suite.t, suite.admin.membershipId, user.username, 'changed while it signed in');
    });

    it('its user frozen meanwhile: no session opens, so none comes back when the user is reactivated', async () => {
      const { user } = await newUser();
      const userPath = `${usersPath(suite.admin.membershipId)}/${user._id}`;
      const res = await signInAround(user, async () => {
        await suite.t.http().post(`${userPath}/freeze`).set('Authorization', suite.admin.auth).expect(200);
      });
      await suite.t.http().post(`${userPath}/activate`).set('Authorization', suite.admin.auth).expect(200);
      expect({ status: res.status, code: res.body.errorCode }).toEqual({ status: 401, code: 'InvalidCredentials' });
      expect(res.body.access_token).toBeUndefined();
    });
  });

  /** A user with a session refreshed once (`next`), a scoped token of it, and a second session on another device. */
  async function userOnTwoDevices() {
    const { user, session } = await newUser();
    const scoped = await scopedFrom(session.accessToken, ['events.read']);
    const next = await refresh(session.refreshToken);
    const other = await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
    return { user, scoped, next, other };
  }

  /** PUT .../change-password as `auth`: 204. */
  const changePassword = async (userId: string, auth: string, body: { current_password?: string; password: string }): Promise<void> => {
    await suite.t.http().put(`${usersPath(suite.admin.membershipId)}/${userId}/change-password`).set('Authorization', auth).send(body).expect(204);
  };

  describe('password change by another caller', () => {
    it('revokes every session of the user, refreshed pairs and scoped tokens included', async () => {
      const { user, scoped, next, other } = await userOnTwoDevices();
      await changePassword(user._id, suite.admin.auth, { password: 'another long enough password' });
      for (const token of [next.accessToken, scoped, other.accessToken]) await expectRevoked(token);
      await expectWorking(suite.admin.accessToken);
    });
  });

  describe('password change by the user itself', () => {
    it("spares the caller's own session across refreshes, its scoped tokens included, and ends every other", async () => {
      const { user, scoped, next, other } = await userOnTwoDevices();
      await changePassword(user._id, bearer(next.accessToken), { current_password: user.password, password: 'my own new long password' });
      await expectWorking(next.accessToken);
      await expectWorking(scoped);
      await expectRevoked(other.accessToken);
    });
  });
});
