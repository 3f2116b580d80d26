import { eq, sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../../src/database/database';
import { events, tokenCodes, users } from '../../src/database/schema';
import { ExpirySweeper } from '../../src/common/expiry-sweeper';
import { startTestApp } from '../support/app';
import { captureLog } from '../support/log-capture';
import { createApplication, createMembership, createSignedInUser, putBodyOf, setupInstallation, updateMembership, useInstallation, usersPath } from '../support/api';
import { serverUrl } from '../support/database';
import { overlapWithHeldStatement } from '../support/held-statement';
import { scopedToken } from '../support/protected-apps';

/** The device code flow (RFC 8628), from the device's side and the approving user's. */
describe('device code flow', () => {
  // Loopback webhooks allowed: one test holds an approval up at its webhook delivery's insert.
  const suite = useInstallation({ env: { OUTBOUND_ALLOW: '127.0.0.1/32' } });

  const codesPath = () => `/memberships/${suite.admin.membershipId}/codes`;
  const createCode = async (clientInfo: Record<string, string> = { name: 'Living room TV' }) => {
    const res = await suite.t.http().post(codesPath()).send({ client_info: clientInfo });
    if (res.status !== 201) throw new Error(`create code failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number };
  };
  const poll = (deviceCode: string) => suite.t.http().post(`${codesPath()}/token`).send({ device_code: deviceCode });
  const decide = (auth: string, userCode: string, decision: 'approve' | 'deny') =>
    suite.t.http().post(`${codesPath()}/${userCode}/${decision}`).set('Authorization', auth).send();
  const errorOf = (res: { status: number; body: { errorCode?: string } }) => ({ status: res.status, code: res.body.errorCode });
  const newUser = () => createSignedInUser(suite.t, suite.admin, { permissions: ['users.read', 'events.read'] });

  it("guessing user codes is limited per user (RFC 8628 5.1): past max_failures wrong codes every lookup answers 429, the user's sign-in untouched", async () => {
    const code = await createCode();
    const { user, session } = await newUser();
    const wrong = (i: number) => `WRONG${String(i).padStart(3, '0')}`;
    // The default policy: 10 failures within the window lock for 60 s.
    for (let i = 0; i < 10; i++) {
      const guess = i % 2 ? suite.t.http().get(`${codesPath()}/${wrong(i)}`).set('Authorization', session.auth) : decide(session.auth, wrong(i), 'approve');
      expect(errorOf(await guess)).toEqual({ status: 404, code: 'TokenCodeNotFound' });
    }
    const locked = await suite.t.http().get(`${codesPath()}/${code.user_code}`).set('Authorization', session.auth);
    expect({ ...errorOf(locked), retryAfter: Number(locked.headers['retry-after']) > 0 }).toEqual({ status: 429, code: 'TooManySignInAttempts', retryAfter: true });
    expect(errorOf(await decide(session.auth, code.user_code, 'approve'))).toEqual({ status: 429, code: 'TooManySignInAttempts' });
    // Counted apart from the password: the user still signs in.
    const signedIn = await suite.t.http().post('/generate-token').set('X-Service-Alias', suite.admin.membershipId).send({ username: user.username, password: user.password });
    expect(signedIn.status).toBe(201);
    // Another user still finds the code, and an administrator's unlock ends the lock.
    expect((await suite.t.http().get(`${codesPath()}/${code.user_code}`).set('Authorization', (await newUser()).session.auth)).status).toBe(200);
    expect((await suite.t.http().post(`${usersPath(suite.admin.membershipId)}/${user._id}/unlock`).set('Authorization', suite.admin.auth)).status).toBe(204);
    expect((await suite.t.http().get(`${codesPath()}/${code.user_code}`).set('Authorization', session.auth)).status).toBe(200);
  });

  it("a code the guesser holds itself does not start its count over: looking up its own code between wrong guesses still locks", async () => {
    // Anyone can create a code (public route) and so always has one that exists: were finding it a
    // success of the count, wrong guesses between such lookups would never reach the lock.
    const own = await createCode();
    const { session } = await newUser();
    const wrong = (i: number) => `WRONG${String(i).padStart(3, '0')}`;
    let locked = false;
    for (let i = 0; i < 30 && !locked; i++) {
      if (i % 5 === 4) {
        const found = await suite.t.http().get(`${codesPath()}/${own.user_code}`).set('Authorization', session.auth);
        locked = found.status === 429;
        if (!locked) expect(found.status).toBe(200);
        continue;
      }
      const guess = await suite.t.http().get(`${codesPath()}/${wrong(i)}`).set('Authorization', session.auth);
      locked = guess.status === 429;
      if (!locked) expect(errorOf(guess)).toEqual({ status: 404, code: 'TokenCodeNotFound' });
    }
    expect(locked).toBe(true);
  });

  it('runs the whole flow: create, view, approve, poll for the pair, which works and is the approver', async () => {
    const code = await createCode();
    expect(code).toEqual({
      device_code: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      user_code: expect.stringMatching(/^[23456789BCDFGHJKLMNPQRSTVWXZ]{8}$/),
      // The default carries the membership: the user types only the code.
      verification_uri: `http://localhost:0/device?membership_id=${encodeURIComponent(suite.admin.membershipId)}`,
      verification_uri_complete: `http://localhost:0/device?membership_id=${encodeURIComponent(suite.admin.membershipId)}&user_code=${code.user_code}`,
      expires_in: 600,
      interval: 5,
    });
    expect(errorOf(await poll(code.device_code))).toEqual({ status: 400, code: 'AuthorizationPending' });

    const { session } = await newUser();
    // Typed as people type it: lower case, with a dash.
    const typed = `${code.user_code.slice(0, 4).toLowerCase()}-${code.user_code.slice(4)}`;
    const view = await suite.t.http().get(`${codesPath()}/${typed}`).set('Authorization', session.auth);
    expect(view.status).toBe(200);
    expect(view.body).toEqual({
      user_code: code.user_code,
      state: 'pending',
      client_info: { name: 'Living room TV' },
      created_at: expect.any(String),
      expires_at: expect.any(String),
    });
    const approved = await decide(session.auth, typed, 'approve');
    expect({ status: approved.status, state: approved.body.state }).toEqual({ status: 200, state: 'approved' });

    const pair = await suite.t.http().post(`${codesPath()}/token`).set('X-UserAgent', 'tv-os/1.0').send({ device_code: code.device_code });
    expect(pair.status).toBe(201);
    expect(pair.body).toEqual(expect.objectContaining({ token_type: 'Bearer', access_token: expect.any(String), refresh_token: expect.any(String) }));
    const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${pair.body.access_token}`);
    expect({ status: me.status, id: me.body._id }).toEqual({ status: 200, id: session.userId });
    const refreshed = await suite.t.http().get('/refresh-token').set('Authorization', `Bearer ${pair.body.refresh_token}`);
    expect(refreshed.status).toBe(201);

    // Consumed: a later poll, a view and a second decision find nothing.
    expect(errorOf(await poll(code.device_code))).toEqual({ status: 400, code: 'InvalidDeviceCode' });
    expect(errorOf(await decide(session.auth, code.user_code, 'deny'))).toEqual({ status: 409, code: 'TokenCodeAlreadyDecided' });

    const generated = await suite.t.app
      .get<Database>(DATABASE)
      .db.select()
      .from(events)
      .where(sql`${events.eventType} = 'TokenGenerated' and ${events.document} ->> 'grant' = 'device_code'`);
    expect(generated.map((e) => ({ utilizer: e.utilizerId, code: e.document.user_code }))).toEqual([
      { utilizer: session.userId, code: code.user_code },
    ]);
    const approvals = await suite.t.app.get<Database>(DATABASE).db.select().from(events).where(eq(events.eventType, 'TokenCodeApproved'));
    const approval = approvals.find((e) => JSON.stringify(e.document).includes(code.user_code));
    expect(approval?.utilizerId).toBe(session.userId);
    expect(approval?.document).toEqual({
      user: expect.objectContaining({ _id: session.userId }),
      code: { user_code: code.user_code, client_info: { name: 'Living room TV' }, created_at: expect.any(String) },
    });
  });

  it('two parallel polls after approval: exactly one gets the pair, the other InvalidDeviceCode', async () => {
    const code = await createCode();
    const { session } = await newUser();
    expect((await decide(session.auth, code.user_code, 'approve')).status).toBe(200);
    const answers = await Promise.all([poll(code.device_code), poll(code.device_code)]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 400]);
    expect(answers.find((a) => a.status === 400)?.body.errorCode).toBe('InvalidDeviceCode');
  });

  it('approve and deny racing: exactly one wins, the other answers 409', async () => {
    const code = await createCode();
    const { session } = await newUser();
    const answers = await Promise.all([decide(session.auth, code.user_code, 'approve'), decide(session.auth, code.user_code, 'deny')]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 409)?.body.errorCode).toBe('TokenCodeAlreadyDecided');
    const winner = answers.find((a) => a.status === 200)?.body.state as string;
    expect(errorOf(await poll(code.device_code))).toEqual(
      winner === 'approved' ? { status: 201, code: undefined } : { status: 400, code: 'AuthorizationDenied' },
    );
  });

  it('polling sooner than the interval answers SlowDown and grows the interval by 5 seconds', async () => {
    const code = await createCode();
    expect(errorOf(await poll(code.device_code))).toEqual({ status: 400, code: 'AuthorizationPending' });
    expect(errorOf(await poll(code.device_code))).toEqual({ status: 400, code: 'SlowDown' });
    const [row] = await suite.t.app.get<Database>(DATABASE).db.select().from(tokenCodes).where(eq(tokenCodes.userCode, code.user_code));
    expect(row?.pollInterval).toBe(10);
  });

  it('a denied code answers AuthorizationDenied', async () => {
    const code = await createCode();
    const { session } = await newUser();
    const denied = await decide(session.auth, code.user_code, 'deny');
    expect({ status: denied.status, state: denied.body.state }).toEqual({ status: 200, state: 'denied' });
    expect(errorOf(await poll(code.device_code))).toEqual({ status: 400, code: 'AuthorizationDenied' });
    expect(errorOf(await decide(session.auth, code.user_code, 'approve'))).toEqual({ status: 409, code: 'TokenCodeAlreadyDecided' });
  });

  it('an expired code answers ExpiredToken until the sweeper deletes it, then InvalidDeviceCode', async () => {
    const code = await createCode();
    const { session } = await newUser();
    const { db } = suite.t.app.get<Database>(DATABASE);
    // Expired ten minutes ago: past the sweeper's grace (300 s) as well.
    await db.update(tokenCodes).set({ expiresAt: sql`now() - interval '10 minutes'` }).where(eq(tokenCodes.userCode, code.user_code));
    expect(errorOf(await poll(code.device_code))).toEqual({ status: 400, code: 'ExpiredToken' });
    expect(errorOf(await suite.t.http().get(`${codesPath()}/${code.user_code}`).set('Authorization', session.auth))).toEqual({ status: 404, code: 'TokenCodeNotFound' });
    expect(errorOf(await decide(session.auth, code.user_code, 'approve'))).toEqual({ status: 404, code: 'TokenCodeNotFound' });
    await suite.t.app.get(ExpirySweeper).sweep();
    expect(await db.select().from(tokenCodes).where(eq(tokenCodes.userCode, code.user_code))).toEqual([]);
    expect(errorOf(await poll(code.device_code))).toEqual({ status: 400, code: 'InvalidDeviceCode' });
  });

  it('an approver frozen between approval and poll: the code is denied (third review); inactive by other means: 401 UserInactive', async () => {
    const code = await createCode();
    const { user, session } = await newUser();
    expect((await decide(session.auth, code.user_code, 'approve')).status).toBe(200);
    await suite.t.http().put(`${usersPath(suite.admin.membershipId)}/${user._id}`).set('Authorization', suite.admin.auth).send(putBodyOf(user, { is_active: false })).expect(200);
    expect(errorOf(await poll(code.device_code))).toEqual({ status: 400, code: 'AuthorizationDenied' });
    const { db } = suite.t.app.get<Database>(DATABASE);
    const [row] = await db.select().from(tokenCodes).where(eq(tokenCodes.userCode, code.user_code));
    expect(row?.state).toBe('denied');

    // A user made inactive past every service route (straight in the database): the poll still checks.
    const other = await createCode();
    const second = await newUser();
    expect((await decide(second.session.auth, other.user_code, 'approve')).status).toBe(200);
    await db.update(users).set({ isActive: false }).where(eq(users.id, second.user._id));
    expect(errorOf(await poll(other.device_code))).toEqual({ status: 401, code: 'UserInactive' });
    const [kept] = await db.select().from(tokenCodes).where(eq(tokenCodes.userCode, other.user_code));
    expect(kept?.state).toBe('approved');
  });

  it('a scoped approval gives the device a scoped token with exactly those scopes, and no refresh token (third review)', async () => {
    const code = await createCode();
    const { session } = await newUser();
    const scoped = await scopedToken(suite.t, session, ['users.read']);
    expect((await decide(scoped, code.user_code, 'approve')).status).toBe(200);
    const issued = await poll(code.device_code);
    expect({ status: issued.status, scopes: issued.body.scopes, refresh: issued.body.refresh_token }).toEqual({ status: 201, scopes: ['users.read'], refresh: undefined });
    const outOfScope = await suite.t.http().get(`/memberships/${suite.admin.membershipId}/events`).set('Authorization', `Bearer ${issued.body.access_token}`);
    expect(errorOf(outOfScope)).toEqual({ status: 403, code: 'AccessDenied' });
  });

  it("logout-all of the approver revokes the device's session", async () => {
    const code = await createCode();
    const { session } = await newUser();
    expect((await decide(session.auth, code.user_code, 'approve')).status).toBe(200);
    const pair = await poll(code.device_code);
    expect(pair.status).toBe(201);
    await suite.t.http().get('/revoke-token?logout-all=true').set('Authorization', session.auth).expect(204);
    const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${pair.body.access_token}`);
    expect(errorOf(me)).toEqual({ status: 401, code: 'TokenWasRevoked' });
  });

  // Server database only: PGlite runs one statement at a time, so two cannot overlap there.
  (serverUrl() ? it : it.skip)('logout-all while an approval by that session commits: the code it approved is denied; an approval after it answers 401', async () => {
    // A membership of its own: the held statements' webhook calls nothing the other tests count.
    const tenant = await createMembership(suite.t, suite.admin);
    const tenantCodes = `/memberships/${tenant.membershipId}/codes`;
    const code = (await suite.t.http().post(tenantCodes).send({ client_info: { name: 'TV' } }).expect(201)).body as { device_code: string; user_code: string };
    const { session } = await createSignedInUser(suite.t, tenant.admin);
    // Viewed first: the sign-in defenses' counters of the user's lookups exist then, and the
    // approval's own count updates them (only new rows wait for the membership's row).
    await suite.t.http().get(`${tenantCodes}/${code.user_code}`).set('Authorization', session.auth).expect(200);
    // The logout waits for the approval (or, were it not to, is over).
    const [approved, out] = await overlapWithHeldStatement(
      suite.t,
      tenant.admin,
      'TokenCodeApproved',
      () => suite.t.http().post(`${tenantCodes}/${code.user_code}/approve`).set('Authorization', session.auth).send(),
      () => suite.t.http().get('/revoke-token?logout-all=true').set('Authorization', session.auth),
    );
    expect({ approved: approved.status, out: out.status }).toEqual({ approved: 200, out: 204 });
    expect(errorOf(await suite.t.http().post(`${tenantCodes}/token`).send({ device_code: code.device_code }))).toEqual({ status: 400, code: 'AuthorizationDenied' });
    // A later approval by the revoked session: refused as its token is, the code left pending.
    const next = (await suite.t.http().post(tenantCodes).send({ client_info: { name: 'TV' } }).expect(201)).body as { device_code: string; user_code: string };
    expect(errorOf(await suite.t.http().post(`${tenantCodes}/${next.user_code}/approve`).set('Authorization', session.auth).send())).toEqual({ status: 401, code: 'TokenWasRevoked' });
  });

  (serverUrl() ? it : it.skip)('logout-all while a poll of a code it approved commits: the session the poll opened is revoked with the rest', async () => {
    const tenant = await createMembership(suite.t, suite.admin);
    const tenantCodes = `/memberships/${tenant.membershipId}/codes`;
    const code = (await suite.t.http().post(tenantCodes).send({ client_info: { name: 'TV' } }).expect(201)).body as { device_code: string; user_code: string };
    const { session } = await createSignedInUser(suite.t, tenant.admin);
    await suite.t.http().post(`${tenantCodes}/${code.user_code}/approve`).set('Authorization', session.auth).send().expect(200);
    // The logout waits for the poll's statement (or, were it not to, is over).
    const [polled, out] = await overlapWithHeldStatement(
      suite.t,
      tenant.admin,
      'TokenGenerated',
      () => suite.t.http().post(`${tenantCodes}/token`).send({ device_code: code.device_code }),
      () => suite.t.http().get('/revoke-token?logout-all=true').set('Authorization', session.auth),
    );
    expect({ polled: polled.status, out: out.status }).toEqual({ polled: 201, out: 204 });
    const device = polled.body as { access_token: string };
    expect(errorOf(await suite.t.http().get('/me').set('Authorization', `Bearer ${device.access_token}`))).toEqual({ status: 401, code: 'TokenWasRevoked' });
  });

  it('public routes: unknown membership 404, Basic callers cannot decide, client_info is bounded', async () => {
    expect(errorOf(await suite.t.http().post('/memberships/no-such-membership/codes').send({}))).toEqual({ status: 404, code: 'MembershipNotFound' });
    expect(errorOf(await suite.t.http().post('/memberships/no-such-membership/codes/token').send({ device_code: 'x' }))).toEqual({
      status: 404,
      code: 'MembershipNotFound',
    });
    // An Authorization header on a public route is ignored.
    const ignored = await suite.t.http().post(codesPath()).set('Authorization', 'Bearer not-a-token').send({});
    expect(ignored.status).toBe(201);
    const code = await createCode();
    expect(errorOf(await decide(suite.inst.application.basic, code.user_code, 'approve'))).toEqual({ status: 403, code: 'AccessDenied' });
    expect(errorOf(await suite.t.http().post(codesPath()).send({ client_info: { 'Bad-Key': 'x' } }))).toEqual({ status: 400, code: 'ModelValidationError' });
    expect(errorOf(await suite.t.http().post(codesPath()).send({ client_info: { name: 'a\u0007b' } }))).toEqual({ status: 400, code: 'ModelValidationError' });
    // A name that would read reversed on the approval page.
    expect(errorOf(await suite.t.http().post(codesPath()).send({ client_info: { name: '\u202eevil' } }))).toEqual({ status: 400, code: 'ModelValidationError' });
    expect((await suite.t.http().post(codesPath()).send({ client_info: { name: 'laptop \u{1F468}\u200D\u{1F4BB}' } })).status).toBe(201);
    expect(errorOf(await suite.t.http().post(codesPath()).send({ client_info: { name: 'x'.repeat(257) } }))).toEqual({ status: 400, code: 'ModelValidationError' });
    expect(errorOf(await poll('never-issued'))).toEqual({ status: 400, code: 'InvalidDeviceCode' });
  });

  it('the device code appears in no event, no list and no answer but the create answer', async () => {
    const code = await createCode();
    const { session } = await newUser();
    const view = await suite.t.http().get(`${codesPath()}/${code.user_code}`).set('Authorization', session.auth);
    const approved = await decide(session.auth, code.user_code, 'approve');
    const pair = await poll(code.device_code);
    expect(pair.status).toBe(201);
    const eventList = await suite.t.http().get(`/memberships/${suite.admin.membershipId}/events?limit=500`).set('Authorization', suite.admin.auth);
    const tokenList = await suite.t.http().get(`/memberships/${suite.admin.membershipId}/active-tokens`).set('Authorization', suite.admin.auth);
    expect([eventList.status, tokenList.status]).toEqual([200, 200]);
    const stored = await suite.t.app.get<Database>(DATABASE).db.select().from(events);
    const storedCodes = await suite.t.app.get<Database>(DATABASE).db.select().from(tokenCodes);
    for (const text of [view.text, approved.text, pair.text, eventList.text, tokenList.text, JSON.stringify(stored), JSON.stringify(storedCodes)]) {
      expect(text).not.toContain(code.device_code);
    }
  });

  it('the device code appears in no log line, even at trace level and on refused polls', async () => {
    const log = captureLog('trace');
    const logged = await startTestApp({ env: { LOG_LEVEL: 'trace' }, logger: log.logger });
    try {
      const own = await setupInstallation(logged);
      const path = `/memberships/${own.admin.membershipId}/codes`;
      const created = await logged.http().post(path).send({ client_info: { name: 'Logged TV' } });
      const deviceCode = created.body.device_code as string;
      await logged.http().post(`${path}/token`).send({ device_code: deviceCode });
      await logged.http().post(`${path}/token`).send({ device_code: deviceCode });
      await logged.http().post(`${path}/${created.body.user_code as string}/approve`).set('Authorization', own.admin.auth).send();
      const pair = await logged.http().post(`${path}/token`).send({ device_code: deviceCode });
      expect(pair.status).toBe(201);
      await logged.http().post(`${path}/token`).send({ device_code: deviceCode });
      expect(log.lines().length).toBeGreaterThan(0);
      expect(log.text()).not.toContain(deviceCode);
    } finally {
      await logged.close();
    }
  });

  it("a code space filled by anonymous creates answers 503 with Retry-After, not 500 (contract: a 500 is always a bug)", async () => {
    const { t, admin } = suite;
    const tenant = await createMembership(t, admin);
    const policy = await t
      .http()
      .post(`/memberships/${tenant.membershipId}/token-code-policies`)
      .set('Authorization', tenant.admin.auth)
      .send({ name: 'five-digits', length: 5, contains_letters: false, contains_digits: true, expires_in: 1800 });
    expect(policy.status).toBe(201);
    await updateMembership(t, tenant, { code_policy: policy.body.slug });
    // What 100,000 anonymous POST .../codes leave stored (one row each): every five-digit code, pending.
    // Bulk work the service never does: on a server the statement timeout would end it.
    const { db } = t.app.get<Database>(DATABASE);
    await db.transaction(async (tx) => {
      await tx.execute(sql`set local statement_timeout = 0`);
      await tx.execute(sql`insert into token_codes (id, membership_id, user_code, device_code_digest, poll_interval, expires_at)
        select gen_random_uuid()::text, ${tenant.membershipId}, lpad(g::text, 5, '0'), md5(g::text) || md5('d' || g), 5, now() + interval '1800 seconds'
        from generate_series(0, 99999) g`);
    });

    const res = await t.http().post(`/memberships/${tenant.membershipId}/codes`).send({ client_info: { name: 'Living room TV' } });
    expect({ ...errorOf(res), retryAfter: Number(res.headers['retry-after']) > 0 }).toEqual({ status: 503, code: 'AuthenticationServiceUnavailable', retryAfter: true });
  });

  it('one client address may request DEVICE_CODE_ADDRESS_MAX codes per 15 minutes, over every membership and both routes; then 429 with Retry-After', async () => {
    const limited = await startTestApp({ env: { DEVICE_CODE_ADDRESS_MAX: '3' } });
    try {
      const own = await setupInstallation(limited);
      const other = await createMembership(limited, own.admin);
      const create = (membershipId: string) => limited.http().post(`/memberships/${membershipId}/codes`).send({ client_info: { name: 'TV' } });
      const client = await createApplication(limited, other.admin, {
        oidc: { redirect_uris: ['http://127.0.0.1:9/callback'], grant_types: ['urn:ietf:params:oauth:grant-type:device_code'], public: true },
      } as Record<string, unknown>);
      const authorize = () => limited.http().post(`/oidc/${other.membershipId}/device/authorize`).type('form').send({ client_id: client.id });

      expect((await create(own.admin.membershipId)).status).toBe(201);
      expect((await create(other.membershipId)).status).toBe(201);
      expect((await authorize()).status).toBe(200);
      // A header the service does not trust (TRUST_PROXY is off) names no other client.
      const refused = await create(own.admin.membershipId).set('X-Forwarded-For', '198.51.100.7');
      expect({ ...errorOf(refused), retryAfter: Number(refused.headers['retry-after']) }).toEqual({
        status: 429,
        code: 'TooManyDeviceCodeRequests',
        retryAfter: expect.any(Number),
      });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(800);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(900);
      // The OpenID Provider's route answers in OAuth's shape (RFC 8628 names slow_down for a device going too fast).
      const oauth = await authorize();
      expect({ status: oauth.status, body: oauth.body }).toEqual({ status: 429, body: { error: 'slow_down', error_description: expect.any(String) } });
    } finally {
      await limited.close();
    }
  });
});
