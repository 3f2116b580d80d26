import { createSecretKey } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { startTestApp, type TestApp } from '../support/app';
import { PasswordHasher } from '../../src/users/password-hasher';
import { type Installation, setupInstallation, signIn, useInstallation } from '../support/api';

const b64url = (value: object | string): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('tokens: sign-in, scoped tokens, refresh, verify, revoke, /me', () => {
  const suite = useInstallation();
  let membershipId: string;
  beforeAll(() => (membershipId = suite.inst.membership._id));

  const fresh = () => signIn(suite.t, membershipId, suite.inst.admin.username, suite.inst.admin.password);

  /** `Bearer <scoped access token>` made from `caller`'s access token with `scopes`. */
  const scopedAuth = async (caller: { auth: string }, scopes: string[]): Promise<string> => {
    const scoped = await suite.t.http().post('/generate-token').set('Authorization', caller.auth).send({ scopes });
    return `Bearer ${scoped.body.access_token}`;
  };

  describe('POST /generate-token (sign-in)', () => {
    it('answers 201 with the token response object', async () => {
      const res = await suite.t.http().post('/generate-token').set('X-Service-Alias', membershipId).send({ username: suite.inst.admin.username, password: suite.inst.admin.password });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        token_type: 'Bearer',
        access_token: expect.any(String),
        expires_in: 3600,
        refresh_token: expect.any(String),
        refresh_token_expires_in: 86400,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      });
    });

    it('accepts the e-mail address (any case) and the Membership / MembershipId headers', async () => {
      const email = `${suite.inst.admin.username}@EXAMPLE.com`.toUpperCase();
      for (const header of ['Membership', 'MembershipId']) {
        const res = await suite.t.http().post('/generate-token').set(header, membershipId).send({ username: email, password: suite.inst.admin.password });
        expect(res.status).toBe(201);
      }
    });

    it('puts the specified claims in both tokens, signed with the membership secret_key', async () => {
      const res = await suite.t.http().post('/generate-token').set('X-Service-Alias', membershipId).send({ username: suite.inst.admin.username, password: suite.inst.admin.password });
      const key = createSecretKey(Buffer.from(suite.inst.membership.secret_key as string, 'utf8'));
      const { payload: access } = await jwtVerify(res.body.access_token, key, { algorithms: ['HS256'] });
      const { payload: refresh } = await jwtVerify(res.body.refresh_token, key, { algorithms: ['HS256'] });
      expect(decodeProtectedHeader(res.body.access_token).alg).toBe('HS256');
      expect(access).toMatchObject({
        sub: suite.inst.admin.userId,
        prn: membershipId,
        iss: suite.inst.membership.name,
        aud: suite.inst.membership.slug,
        given_name: 'Ada',
        family_name: 'Admin',
        unique_name: suite.inst.admin.username,
        email: `${suite.inst.admin.username}@example.com`,
      });
      expect(access.scope).toBeUndefined();
      expect(access.refresh_token).toBeUndefined();
      expect(refresh.refresh_token).toBe(true);
      expect(access.jti).toEqual(expect.any(String));
      expect(access.jti).not.toBe(refresh.jti);
      expect(access.exp! - access.iat!).toBe(res.body.expires_in);
      expect(refresh.exp! - refresh.iat!).toBe(res.body.refresh_token_expires_in);
      expect(access.nbf).toBe(access.iat);
      expect(new Date(res.body.created_at).getTime()).toBe(access.iat! * 1000);
    });

    it('answers unknown user and wrong password alike, and verifies a decoy hash for unknown users', async () => {
      // One argon2 verification for either: without the decoy an unknown user would answer without
      // hashing, a difference in time an attacker could measure.
      const verifications = jest.spyOn(suite.t.app.get(PasswordHasher), 'verify');
      const signInAs = async (username: string, password: string) => {
        verifications.mockClear();
        const res = await suite.t.http().post('/generate-token').set('X-Service-Alias', membershipId).send({ username, password });
        return { res, verified: verifications.mock.calls.length };
      };
      try {
        const wrong = await signInAs(suite.inst.admin.username, 'wrong password!');
        const unknown = await signInAs('nobody-at-all', 'wrong password!');
        expect(wrong.res.status).toBe(401);
        expect(unknown.res.status).toBe(401);
        expect(unknown.res.body).toEqual(wrong.res.body);
        expect(wrong.res.body.errorCode).toBe('InvalidCredentials');
        expect(wrong.res.headers['www-authenticate']).toBeTruthy();
        expect({ wrong: wrong.verified, unknown: unknown.verified }).toEqual({ wrong: 1, unknown: 1 });
      } finally {
        verifications.mockRestore();
      }
    });

    it('is a sign-in whenever the body has credentials, an Authorization header beside them ignored; scopes with credentials are refused', async () => {
      const admin = await fresh();
      const credentials = { username: suite.inst.admin.username, password: suite.inst.admin.password };
      // A client that attaches its last token to every call, a revoked one included.
      await suite.t.http().post('/revoke-token').set('Authorization', admin.auth).send();
      for (const authorization of [admin.auth, 'Bearer not-a-jwt', 'Basic abc:def']) {
        const res = await suite.t.http().post('/generate-token').set('X-Service-Alias', membershipId).set('Authorization', authorization).send(credentials);
        expect({ authorization, status: res.status }).toEqual({ authorization, status: 201 });
        expect(res.body.refresh_token).toEqual(expect.any(String));
      }
      const wrong = await suite.t.http().post('/generate-token').set('X-Service-Alias', membershipId).set('Authorization', admin.auth).send({ ...credentials, password: 'wrong password!' });
      expect(wrong.status).toBe(401);
      expect(wrong.body.errorCode).toBe('InvalidCredentials');
      for (const authorization of [undefined, (await fresh()).auth]) {
        const request = suite.t.http().post('/generate-token').set('X-Service-Alias', membershipId);
        if (authorization) request.set('Authorization', authorization);
        const mixed = await request.send({ ...credentials, scopes: ['users.read'] });
        expect(mixed.status).toBe(400);
        expect(mixed.body.errorCode).toBe('ModelValidationError');
        expect(mixed.body.errors).toEqual([{ field: 'scopes', message: expect.stringContaining('scoped-token request') }]);
      }
    });

    it('requires the membership header (400) and a known membership (404)', async () => {
      const missing = await suite.t.http().post('/generate-token').send({ username: 'a', password: 'b' });
      expect(missing.status).toBe(400);
      expect(missing.body.errorCode).toBe('MembershipIdRequired');
      const unknown = await suite.t.http().post('/generate-token').set('X-Service-Alias', '00000000-0000-4000-8000-000000000000').send({ username: 'a', password: 'b' });
      expect(unknown.status).toBe(404);
      expect(unknown.body.errorCode).toBe('MembershipNotFound');
    });
  });

  describe('scoped tokens', () => {
    it('issues a scoped token without refresh token, with the 12-hour default lifetime and a scope claim', async () => {
      const admin = await fresh();
      const res = await suite.t.http().post('/generate-token').set('Authorization', admin.auth).send({ scopes: ['users.read', 'roles.read'] });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        token_type: 'Bearer',
        access_token: expect.any(String),
        expires_in: 43200,
        created_at: expect.any(String),
        scopes: ['users.read', 'roles.read'],
      });
      const claims = decodeJwt(res.body.access_token);
      expect(claims.scope).toBe('users.read roles.read');
      expect(claims.exp! - claims.iat!).toBe(43200);
    });

    it('rejects an empty list (ScopeRequired), a bad expression (InvalidScope) and a scope the user lacks', async () => {
      const admin = await fresh();
      const empty = await suite.t.http().post('/generate-token').set('Authorization', admin.auth).send({ scopes: [] });
      expect(empty.status).toBe(400);
      expect(empty.body.errorCode).toBe('ScopeRequired');
      const missing = await suite.t.http().post('/generate-token').set('Authorization', admin.auth).send({});
      expect(missing.body.errorCode).toBe('ScopeRequired');
      for (const bad of [['users..read'], ['us*ers'], ['a.b.c.d.e'], [42], 'users.read']) {
        const res = await suite.t.http().post('/generate-token').set('Authorization', admin.auth).send({ scopes: bad });
        expect(res.status).toBe(400);
        expect(res.body.errorCode).toBe('InvalidScope');
      }
      const lacking = await suite.t.http().post('/generate-token').set('Authorization', admin.auth).send({ scopes: ['billing.read'] });
      expect(lacking.status).toBe(400);
      expect(lacking.body.errorCode).toBe('UserHasNoPermissionForThisScope');
    });

    it('narrows only: a scoped token may request fewer scopes, never more', async () => {
      const admin = await fresh();
      const auth = await scopedAuth(admin, ['users.read']);
      const narrower = await suite.t.http().post('/generate-token').set('Authorization', auth).send({ scopes: ['users.read.some-id'] });
      expect(narrower.status).toBe(201);
      const same = await suite.t.http().post('/generate-token').set('Authorization', auth).send({ scopes: ['users.read'] });
      expect(same.status).toBe(201);
      for (const wider of [['users.*'], ['roles.read'], ['users.read', 'roles.read']]) {
        const res = await suite.t.http().post('/generate-token').set('Authorization', auth).send({ scopes: wider });
        expect(res.status).toBe(400);
        expect(res.body.errorCode).toBe('UserHasNoPermissionForThisScope');
      }
    });

    it('a request with a scoped token needs both the user permission and a scope; scopes never grant', async () => {
      const admin = await fresh();
      const auth = await scopedAuth(admin, ['users.read']);
      const allowed = await suite.t.http().get('/roles/check-permission').query({ permission: 'users.read' }).set('Authorization', auth);
      expect(allowed.body).toMatchObject({ allowed: true, reason: 'role_permission' });
      const outside = await suite.t.http().get('/roles/check-permission').query({ permission: 'roles.read' }).set('Authorization', auth);
      expect(outside.body).toMatchObject({ allowed: false, reason: 'scope' });
      const notHeld = await suite.t.http().get('/roles/check-permission').query({ permission: 'billing.read' }).set('Authorization', auth);
      expect(notHeld.body).toMatchObject({ allowed: false, reason: 'no_permission' });
    });

    it('a scoped token made from a scoped token lives no longer than it: chaining never renews access', async () => {
      const admin = await fresh();
      const parent = await suite.t.http().post('/generate-token').set('Authorization', admin.auth).send({ scopes: ['users.read'] });
      expect(parent.status).toBe(201);
      const parentExp = decodeJwt(parent.body.access_token).exp!;
      // A second later, a fresh 12 hours would reach past the parent's end.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const child = await suite.t.http().post('/generate-token').set('Authorization', `Bearer ${parent.body.access_token}`).send({ scopes: ['users.read'] });
      expect(child.status).toBe(201);
      const claims = decodeJwt(child.body.access_token);
      expect(claims.exp!).toBeLessThanOrEqual(parentExp);
      expect(child.body.expires_in).toBe(claims.exp! - claims.iat!);
    });

    it('a scoped token cannot be refreshed and dies with its sign-in session', async () => {
      const admin = await fresh();
      const scoped = await suite.t.http().post('/generate-token').set('Authorization', admin.auth).send({ scopes: ['users.read'] });
      const notRefreshable = await suite.t.http().get('/refresh-token').set('Authorization', `Bearer ${scoped.body.access_token}`);
      expect(notRefreshable.status).toBe(401);
      expect(notRefreshable.body.errorCode).toBe('TokenIsNotRefreshable');
      await suite.t.http().get('/revoke-token').set('Authorization', admin.auth).expect(204);
      const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${scoped.body.access_token}`);
      expect(me.status).toBe(401);
      expect(me.body.errorCode).toBe('TokenWasRevoked');
    });
  });

  describe('refresh', () => {
    it('GET with the refresh token issues a new pair and the used pair stops working (revoke=true default)', async () => {
      const admin = await fresh();
      const res = await suite.t.http().get('/refresh-token').set('Authorization', `Bearer ${admin.refreshToken}`);
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, refresh_token_expires_in: 86400 });
      const oldAccess = await suite.t.http().get('/me').set('Authorization', admin.auth);
      expect(oldAccess.status).toBe(401);
      expect(oldAccess.body.errorCode).toBe('TokenWasRevoked');
      const newAccess = await suite.t.http().get('/me').set('Authorization', `Bearer ${res.body.access_token}`);
      expect(newAccess.status).toBe(200);
      // Reusing the rotated token answers 401 and ends the session (see sessions.e2e-spec.ts).
      const reuse = await suite.t.http().get('/refresh-token').set('Authorization', `Bearer ${admin.refreshToken}`);
      expect(reuse.status).toBe(401);
      expect(reuse.body.errorCode).toBe('RefreshTokenWasRevoked');
    });

    it('POST with the body and revoke=false keeps the refresh token usable', async () => {
      const admin = await fresh();
      const first = await suite.t.http().post('/refresh-token').query({ revoke: 'false' }).send({ token: admin.refreshToken });
      expect(first.status).toBe(201);
      const second = await suite.t.http().post('/refresh-token').query({ revoke: false }).send({ token: admin.refreshToken });
      expect(second.status).toBe(201);
      expect(second.body.access_token).not.toBe(first.body.access_token);
      const third = await suite.t.http().post('/refresh-token').query({ revoke: '0' }).send({ token: admin.refreshToken });
      expect(third.status).toBe(201);
      await suite.t.http().get('/me').set('Authorization', admin.auth).expect(200);
      // Anything else is refused, and the answer says what is taken.
      const shouted = await suite.t.http().post('/refresh-token').query({ revoke: 'FALSE' }).send({ token: admin.refreshToken });
      expect(shouted.status).toBe(400);
      expect(shouted.body.errors).toEqual([{ field: 'revoke', message: 'must be true or false (or 1 or 0)' }]);
    });

    it('two concurrent refreshes with one token: exactly one wins', async () => {
      const admin = await fresh();
      const results = await Promise.all([1, 2, 3].map(() => suite.t.http().post('/refresh-token').send({ token: admin.refreshToken })));
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      for (const r of results.filter((x) => x.status !== 201)) expect(r.body.errorCode).toBe('RefreshTokenWasRevoked');
    });

    it('an access token is not refreshable; no token is 400 RefreshTokenRequired', async () => {
      const admin = await fresh();
      const access = await suite.t.http().get('/refresh-token').set('Authorization', admin.auth);
      expect(access.status).toBe(401);
      expect(access.body.errorCode).toBe('TokenIsNotRefreshable');
      const none = await suite.t.http().get('/refresh-token');
      expect(none.status).toBe(400);
      expect(none.body.errorCode).toBe('RefreshTokenRequired');
      const emptyBody = await suite.t.http().post('/refresh-token').send({});
      expect(emptyBody.body.errorCode).toBe('RefreshTokenRequired');
      const badRevoke = await suite.t.http().get('/refresh-token').query({ revoke: 'maybe' }).set('Authorization', `Bearer ${admin.refreshToken}`);
      expect(badRevoke.status).toBe(400);
    });

    it('a refresh token used as an access token is InvalidToken', async () => {
      const admin = await fresh();
      const res = await suite.t.http().get('/me').set('Authorization', `Bearer ${admin.refreshToken}`);
      expect(res.status).toBe(401);
      expect(res.body.errorCode).toBe('InvalidToken');
    });
  });

  describe('verify', () => {
    it('GET and POST verify Bearer access and refresh tokens', async () => {
      const admin = await fresh();
      const get = await suite.t.http().get('/verify-token').set('Authorization', admin.auth);
      expect(get.status).toBe(200);
      // amr (RFC 8176): a password sign-in without a second factor.
      expect(get.body).toEqual({ verified: true, token: admin.accessToken, token_kind: 'access_token', remaining_time: expect.any(Number), amr: ['pwd'] });
      expect(get.body.remaining_time).toBeGreaterThan(3590);
      expect(get.body.remaining_time).toBeLessThanOrEqual(3600);
      const post = await suite.t.http().post('/verify-token').send({ token: `Bearer ${admin.refreshToken}` });
      expect(post.status).toBe(200);
      expect(post.body.token_kind).toBe('refresh_token');
      const bare = await suite.t.http().post('/verify-token').send({ token: admin.accessToken });
      expect(bare.body.token_kind).toBe('access_token');
    });

    it('verifies Basic tokens with only verified and token', async () => {
      const get = await suite.t.http().get('/verify-token').set('Authorization', suite.inst.application.basic);
      expect(get.status).toBe(200);
      expect(Object.keys(get.body).sort()).toEqual(['token', 'verified']);
      expect(get.body.verified).toBe(true);
      const base64 = Buffer.from(`${suite.inst.application.id}:${suite.inst.application.secret}`).toString('base64');
      const post = await suite.t.http().post('/verify-token').send({ token: `Basic ${base64}` });
      expect(post.status).toBe(200);
    });

    it('answers every Basic problem with the same 401 InvalidToken', async () => {
      const cases = [
        `Basic ${suite.inst.application.id}:wrong-secret`,
        `Basic 00000000-0000-4000-8000-000000000000:${suite.inst.application.secret}`,
        `Basic ${suite.inst.application.id}`,
        'Basic :',
        'Basic %%%',
      ];
      const bodies = [];
      for (const header of cases) {
        const res = await suite.t.http().get('/me').set('Authorization', header);
        expect(res.status).toBe(401);
        bodies.push(res.body.errorCode);
      }
      expect(new Set(bodies)).toEqual(new Set(['InvalidToken']));
    });
  });

  describe('revoke', () => {
    it('revokes the pair together: 204, then the access and refresh tokens are rejected', async () => {
      const admin = await fresh();
      await suite.t.http().get('/revoke-token').set('Authorization', admin.auth).expect(204);
      const me = await suite.t.http().get('/me').set('Authorization', admin.auth);
      expect(me.body.errorCode).toBe('TokenWasRevoked');
      const refresh = await suite.t.http().get('/refresh-token').set('Authorization', `Bearer ${admin.refreshToken}`);
      expect(refresh.body.errorCode).toBe('RefreshTokenWasRevoked');
      const again = await suite.t.http().get('/revoke-token').set('Authorization', admin.auth);
      expect(again.status).toBe(401);
    });

    it('POST with the refresh token in the body revokes the pair', async () => {
      const admin = await fresh();
      await suite.t.http().post('/revoke-token').send({ token: admin.refreshToken }).expect(204);
      expect((await suite.t.http().get('/me').set('Authorization', admin.auth)).status).toBe(401);
    });

    it('logout-all revokes every session of the user', async () => {
      const a = await fresh();
      const b = await fresh();
      await suite.t.http().get('/revoke-token').query({ 'logout-all': 'true' }).set('Authorization', a.auth).expect(204);
      expect((await suite.t.http().get('/me').set('Authorization', b.auth)).body.errorCode).toBe('TokenWasRevoked');
      // The admin still signs in again.
      await suite.t.http().get('/me').set('Authorization', (await fresh()).auth).expect(200);
    });

    it('cannot revoke an invalid token', async () => {
      const res = await suite.t.http().post('/revoke-token').send({ token: 'not-a-token' });
      expect(res.status).toBe(401);
      expect(res.body.errorCode).toBe('InvalidToken');
    });
  });

  describe('/me and /whoami', () => {
    it('answer the full user for Bearer, without any hash', async () => {
      const admin = await fresh();
      for (const path of ['/me', '/whoami']) {
        const res = await suite.t.http().get(path).set('Authorization', admin.auth);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ _id: suite.inst.admin.userId, username: suite.inst.admin.username, role: 'admin', is_active: true, membership_id: membershipId });
        expect(JSON.stringify(res.body)).not.toMatch(/argon2|password/i);
      }
    });

    it('answer the application for Basic, without the secret', async () => {
      const res = await suite.t.http().get('/whoami').set('Authorization', suite.inst.application.basic);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ _id: suite.inst.application.id, role: 'admin', membership_id: membershipId });
      expect(JSON.stringify(res.body)).not.toContain(suite.inst.application.secret);
      expect(res.body.secret).toBeUndefined();
    });

    it('needs a token', async () => {
      const res = await suite.t.http().get('/me');
      expect(res.status).toBe(401);
      expect(res.body.errorCode).toBe('InvalidToken');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    });
  });

  describe('malformed tokens are 401 InvalidToken, never 500', () => {
    it('rejects every kind of forged or broken token', async () => {
      const admin = await fresh();
      const [header, payload, signature] = admin.accessToken.split('.');
      const claims = decodeJwt(admin.accessToken);
      const otherKey = createSecretKey(Buffer.from('another-membership-secret-key-0123456789', 'utf8'));
      const ownKey = createSecretKey(Buffer.from(suite.inst.membership.secret_key as string, 'utf8'));
      const forged = {
        notBase64: 'not.a.jwt!!',
        garbage: 'abc',
        alg_none: `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.`,
        tampered: `${header}.${b64url({ ...claims, sub: 'someone-else' })}.${signature}`,
        otherKey: await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS256' }).sign(otherKey),
        wrongAudience: await new SignJWT({ ...claims, aud: 'another-slug' }).setProtectedHeader({ alg: 'HS256' }).sign(ownKey),
        wrongIssuer: await new SignJWT({ ...claims, iss: 'another-name' }).setProtectedHeader({ alg: 'HS256' }).sign(ownKey),
        hs512: await new SignJWT({ ...claims }).setProtectedHeader({ alg: 'HS512' }).sign(ownKey),
        unknownMembership: await new SignJWT({ ...claims, prn: '00000000-0000-4000-8000-000000000000' }).setProtectedHeader({ alg: 'HS256' }).sign(ownKey),
        unknownSession: await new SignJWT({ ...claims, sid: '00000000-0000-4000-8000-000000000000' }).setProtectedHeader({ alg: 'HS256' }).sign(ownKey),
        unknownTokenRecord: await new SignJWT({ ...claims, tid: '00000000-0000-4000-8000-000000000000' }).setProtectedHeader({ alg: 'HS256' }).sign(ownKey),
        huge: `${header}.${'A'.repeat(20 * 1024)}.${signature}`,
      };
      for (const [name, token] of Object.entries(forged)) {
        const res = await suite.t.http().get('/me').set('Authorization', `Bearer ${token}`);
        expect({ name, status: res.status, code: res.body.errorCode }).toEqual({ name, status: 401, code: 'InvalidToken' });
      }
      for (const header of ['Bearer', 'Token abc', 'Basic', 'Bearer a b', `Bearer ${'x'.repeat(20 * 1024)}`]) {
        const res = await suite.t.http().get('/me').set('Authorization', header);
        expect({ header: header.slice(0, 20), status: res.status, code: res.body.errorCode }).toEqual({ header: header.slice(0, 20), status: 401, code: 'InvalidToken' });
      }
    });
  });
});

describe('tokens: expiry with a membership whose lifetimes are seconds', () => {
  let t: TestApp;
  let inst: Installation;

  beforeAll(async () => {
    t = await startTestApp();
    inst = await setupInstallation(t, { expires_in: 1, refresh_token_expires_in: 4, scoped_token_expires_in: 1 });
  });
  // Closing the app also drops its database on the PostgreSQL server; without this the app kept
  // listening after the run and its portcullis_t_* database stayed behind.
  afterAll(() => t?.close());

  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('access tokens expire (TokenWasExpired) while the refresh token still works, then it expires too', async () => {
    // iat is whole seconds, so a 1-second token issued late in a second lives only what is left of
    // that second. Start just after a second boundary so sign-in and generate-token fit in it.
    await sleep(1000 - (Date.now() % 1000) + 20);
    const session = await signIn(t, inst.membership._id, inst.admin.username, inst.admin.password);
    const scoped = await t.http().post('/generate-token').set('Authorization', session.auth).send({ scopes: ['users.read'] });
    expect(scoped.body.expires_in).toBe(1);
    await sleep(2100);
    const expired = await t.http().get('/me').set('Authorization', session.auth);
    expect(expired.status).toBe(401);
    expect(expired.body.errorCode).toBe('TokenWasExpired');
    expect((await t.http().get('/verify-token').set('Authorization', session.auth)).body.errorCode).toBe('TokenWasExpired');
    expect((await t.http().get('/me').set('Authorization', `Bearer ${scoped.body.access_token}`)).body.errorCode).toBe('TokenWasExpired');
    const refreshed = await t.http().get('/refresh-token').query({ revoke: 'false' }).set('Authorization', `Bearer ${session.refreshToken}`);
    expect(refreshed.status).toBe(201);
    // iat is whole seconds, so the refresh token dies at most 4 s after sign-in.
    await sleep(2600);
    const late = await t.http().get('/refresh-token').set('Authorization', `Bearer ${session.refreshToken}`);
    expect(late.status).toBe(401);
    expect(late.body.errorCode).toBe('RefreshTokenWasExpired');
  });
});
