import { randomUUID } from 'node:crypto';
import { decodeJwt, type JWTPayload } from 'jose';
import {
  type ApiObject,
  createMailhook,
  createRole,
  createSignedInUser,
  createUser,
  eventually,
  expectErrorBody,
  loopbackSmtpProvider,
  putBodyOf,
  signIn,
  type SignedIn,
  unique,
  updateMembership,
  useTenants,
  webhookBody,
} from '../support/api';
import { useMailCatcher } from '../support/mail-catcher';
import { newSigningKey, signIdToken, startOidcProvider, type OidcTestProvider } from '../support/oidc-provider';
import { scopedToken } from '../support/protected-apps';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

const CLIENT_ID = 'third-review-client';

/**
 * The third security review (issue 33): each hole it reproduced, tried again the way it was found,
 * against the real app. Contract, "Decisions of the third review (2026-11-28)".
 */
describe('third security review', () => {
  const suite = useTenants({ env: { ...ALLOW_LOOPBACK_RECEIVERS, PROVIDER_TIMEOUT_MS: '2000' } });
  const catcher = useMailCatcher();
  let oidc: OidcTestProvider;
  let signingKey: Awaited<ReturnType<typeof newSigningKey>>;

  beforeAll(async () => {
    signingKey = await newSigningKey('key-1');
    oidc = await startOidcProvider({ keys: [signingKey.privateJwk], clients: [{ client_id: CLIENT_ID, client_secret: 'unused-secret', redirect_uris: ['http://127.0.0.1:9/cb'] }], accounts: {} });
  });
  afterAll(async () => {
    await oidc?.stop();
  });

  const m = (): string => suite.tenant.membershipId;
  const admin = (): SignedIn => suite.tenant.admin;
  const http = () => suite.t.http();
  const providersPath = (): string => `/memberships/${m()}/providers`;
  const providerBody = (overrides: ApiObject = {}): ApiObject => ({ name: unique('Provider'), type: 'oidc', issuer: oidc.issuer, client_id: CLIENT_ID, ...overrides });
  const putBody = (provider: ApiObject, overrides: ApiObject = {}): ApiObject => {
    const { _id: _ignoredId, sys: _sys, has_client_secret: _has, membership_id: _membership, ...body } = provider;
    return { ...body, ...overrides };
  };
  async function createProvider(overrides: ApiObject = {}): Promise<ApiObject> {
    const res = await http().post(providersPath()).set('Authorization', admin().auth).send(providerBody(overrides));
    if (res.status !== 201) throw new Error(`create provider: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** A user whose role holds only providers.*: what issue 33 point 1 started from. */
  async function providersOnlyUser(): Promise<SignedIn> {
    const role = await createRole(suite.t, admin(), { permissions: ['providers.*'] });
    return (await createSignedInUser(suite.t, admin(), { role: role.slug })).session;
  }

  describe('provider trust is a grant', () => {
    it('refuses trust_email: true on create to a caller without *, and lets the admin do it', async () => {
      const caller = await providersOnlyUser();
      const res = await http().post(providersPath()).set('Authorization', caller.auth).send(providerBody({ trust_email: true }));
      expectErrorBody(res, 403, 'AccessDenied');
      const plain = await http().post(providersPath()).set('Authorization', caller.auth).send(providerBody());
      expect(plain.status).toBe(201);
      expect((await http().post(providersPath()).set('Authorization', admin().auth).send(providerBody({ trust_email: true }))).status).toBe(201);
    });

    it('refuses turning trust_email on, and re-pointing a trusting provider (issuer or client_id)', async () => {
      const caller = await providersOnlyUser();
      const untrusting = await createProvider();
      expectErrorBody(await http().put(`${providersPath()}/${untrusting._id}`).set('Authorization', caller.auth).send(putBody(untrusting, { trust_email: true })), 403, 'AccessDenied');
      const trusting = await createProvider({ trust_email: true });
      const path = `${providersPath()}/${trusting._id}`;
      expectErrorBody(await http().put(path).set('Authorization', caller.auth).send(putBody(trusting, { issuer: 'https://attacker.example.com' })), 403, 'AccessDenied');
      expectErrorBody(await http().put(path).set('Authorization', caller.auth).send(putBody(trusting, { client_id: 'attacker-client' })), 403, 'AccessDenied');
      // A change that does not re-point it is not a grant.
      const renamed = await http().put(path).set('Authorization', caller.auth).send(putBody(trusting, { description: 'renamed' }));
      expect(renamed.status).toBe(200);
      expect((await http().get(path).set('Authorization', admin().auth)).body).toMatchObject({ issuer: oidc.issuer, client_id: CLIENT_ID, trust_email: true });
    });

    it('re-checks the default role as a grant when issuer or client_id of a provider that has one changes', async () => {
      const caller = await providersOnlyUser();
      const powerful = await createRole(suite.t, admin(), { permissions: ['users.*'] });
      const provider = await createProvider({ default_role: powerful.slug });
      const path = `${providersPath()}/${provider._id}`;
      expectErrorBody(await http().put(path).set('Authorization', caller.auth).send(putBody(provider, { issuer: 'https://attacker.example.com' })), 403, 'AccessDenied');
      expectErrorBody(await http().put(path).set('Authorization', caller.auth).send(putBody(provider, { client_id: 'attacker-client' })), 403, 'AccessDenied');
      expect((await http().put(path).set('Authorization', caller.auth).send(putBody(provider, { description: 'kept role' }))).status).toBe(200);
      expect((await http().put(path).set('Authorization', admin().auth).send(putBody(provider, { issuer: 'https://new-issuer.example.com' }))).status).toBe(200);
    });
  });

  describe('write-only secrets stay with their destination', () => {
    it('a mail provider entry whose host, port, tls or username changes must send its password again (or null)', async () => {
      const relay = { slug: 'relay', name: 'Relay', type: 'smtp', host: 'smtp.example.com', port: 587, tls: 'starttls', username: 'mailer' };
      await updateMembership(suite.t, suite.tenant, { mail_providers: [{ ...relay, password: 'the-smtp-password' }] });
      const put = (entry: ApiObject) => http().put(`/memberships/${m()}`).set('Authorization', admin().auth).send({ name: suite.tenant.membership.name, mail_providers: [entry] });
      for (const change of [{ host: 'smtp.attacker.example' }, { port: 2525 }, { tls: 'none' }, { username: 'someone-else' }]) {
        const res = await put({ ...relay, ...change });
        expectErrorBody(res, 400, 'ModelValidationError');
        expect(res.body.errors).toEqual([{ field: 'mail_providers.0.password', message: expect.stringContaining('must be sent again') }]);
      }
      // The same destination keeps the password; a new one with the password, or null, is taken.
      const renamed = await put({ ...relay, name: 'Relay renamed' });
      expect({ status: renamed.status, providers: renamed.body.mail_providers }).toEqual({ status: 200, providers: [expect.objectContaining({ name: 'Relay renamed', has_password: true })] });
      const moved = await put({ ...relay, name: 'Relay renamed', host: 'smtp2.example.com', password: null });
      expect({ status: moved.status, providers: moved.body.mail_providers }).toEqual({ status: 200, providers: [expect.objectContaining({ host: 'smtp2.example.com', has_password: false })] });
    });

    it('a provider whose issuer or client_id changes must send client_secret again (or null)', async () => {
      const provider = await createProvider({ client_secret: 'the-client-secret' });
      const path = `${providersPath()}/${provider._id}`;
      for (const change of [{ issuer: 'https://attacker.example.com' }, { client_id: 'another-client' }]) {
        const res = await http().put(path).set('Authorization', admin().auth).send(putBody(provider, change));
        expectErrorBody(res, 400, 'ModelValidationError');
        expect(res.body.errors).toEqual([{ field: 'client_secret', message: expect.stringContaining('must be sent again') }]);
      }
      expect((await http().get(path).set('Authorization', admin().auth)).body).toMatchObject({ issuer: oidc.issuer, has_client_secret: true });
      const cleared = await http().put(path).set('Authorization', admin().auth).send(putBody(provider, { issuer: 'https://attacker.example.com', client_secret: null }));
      expect({ status: cleared.status, has: cleared.body.has_client_secret }).toEqual({ status: 200, has: false });
    });
  });

  describe('bodies, counted whole', () => {
    const zeros = (count: number): string => `[${new Array<string>(count).fill('0').join(',')}]`;

    it('answers a top-level array of 520,000 elements with a small 400 at once, and a string, a number and null too', async () => {
      for (const body of [zeros(520_000), '"a string"', '42', 'null']) {
        const started = Date.now();
        const res = await http().post('/verify-otp').set('Content-Type', 'application/json').send(body);
        expectErrorBody(res, 400, 'ModelValidationError');
        expect(res.body.errors).toEqual([{ field: 'request.body', message: 'must be a JSON object' }]);
        expect(res.text.length).toBeLessThan(64 * 1024);
        expect(Date.now() - started).toBeLessThan(2000);
      }
      // Not JSON at all stays what it was.
      expectErrorBody(await http().post('/verify-otp').set('Content-Type', 'application/json').send('nul'), 400, 'MalformedJson');
    });

    it('takes the largest lists the contract allows, and answers one more by the rule of that list', async () => {
      const ids = (count: number): string[] => Array.from({ length: count }, () => randomUUID());
      const bulk = (body: object) => http().delete(`/memberships/${m()}/roles`).set('Authorization', admin().auth).send(body);
      const thousand = await bulk({ ids: ids(1000) });
      expect({ status: thousand.status, deleted: thousand.body.deleted, notFound: thousand.body.not_found?.length }).toEqual({ status: 200, deleted: [], notFound: 1000 });
      const tooMany = await bulk({ ids: ids(1001) });
      expectErrorBody(tooMany, 400, 'ModelValidationError');
      expect(tooMany.body.errors).toEqual([{ field: 'ids', message: 'must be an array of 1 to 1000 id strings' }]);

      const query = (values: string[]) =>
        http().post(`/memberships/${m()}/users/_query`).set('Authorization', admin().auth).send({ where: { username: { $in: values } }, select: { username: 1 } });
      const inThousand = await query(ids(1000));
      expect({ status: inThousand.status, items: inThousand.body.items }).toEqual({ status: 200, items: [] });
      expectErrorBody(await query(ids(1001)), 400, 'InvalidQuery');
    });

    it('counts the elements of every array in a body, and refuses past 2000 before validation', async () => {
      const res = await http().delete(`/memberships/${m()}/roles`).set('Authorization', admin().auth).send({ ids: Array.from({ length: 1001 }, (_, i) => `id${i}`), more: new Array(1000).fill(0) });
      expectErrorBody(res, 400, 'ModelValidationError');
      expect(res.body.errors).toEqual([{ field: 'request.body', message: 'must have at most 2000 array elements in all' }]);
    });

    it('lists at most 20 errors in a validation answer', async () => {
      const unknownFields = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`unknown_${i}`, i]));
      const res = await http().post(`/memberships/${m()}/roles`).set('Authorization', admin().auth).send({ name: unique('Role'), ...unknownFields });
      expectErrorBody(res, 400, 'ModelValidationError');
      expect(res.body.errors).toHaveLength(20);
    });
  });

  describe('device codes: scoped means carrying scopes, user-wide triggers reach approved codes', () => {
    const codesPath = (): string => `/memberships/${m()}/codes`;
    const createCode = async (): Promise<{ device_code: string; user_code: string }> => {
      const res = await http().post(codesPath()).send({ client_info: { name: 'TV' } });
      expect(res.status).toBe(201);
      return res.body;
    };
    const poll = (deviceCode: string) => http().post(`${codesPath()}/token`).send({ device_code: deviceCode });
    const approve = async (auth: string, userCode: string): Promise<void> => {
      const res = await http().post(`${codesPath()}/${userCode}/approve`).set('Authorization', auth).send();
      expect({ status: res.status, state: res.body.state }).toEqual({ status: 200, state: 'approved' });
    };

    it('a code approved with a scoped token yields a scoped token: no refresh token, no longer-lived, in its session, no logout-all', async () => {
      const { session } = await createSignedInUser(suite.t, admin(), { permissions: ['users.read'] });
      const scoped = await scopedToken(suite.t, session, ['users.read']);
      const code = await createCode();
      await approve(scoped, code.user_code);
      const res = await poll(code.device_code);
      expect(res.status).toBe(201);
      expect(res.body.refresh_token).toBeUndefined();
      expect(res.body.scopes).toEqual(['users.read']);
      const issued = decodeJwt(res.body.access_token);
      const approving = decodeJwt(scoped.slice('Bearer '.length));
      expect(issued.scope).toBe('users.read');
      expect(issued.exp).toBeLessThanOrEqual(approving.exp as number);
      expect(issued.sid).toBe(approving.sid);
      const device = `Bearer ${res.body.access_token as string}`;
      expectErrorBody(await http().get('/revoke-token').query({ 'logout-all': true }).set('Authorization', device), 403, 'AccessDenied');
      expect((await http().get('/me').set('Authorization', device)).status).toBe(200);
      // It dies with the approving token's session.
      expect((await http().post('/revoke-token').send({ token: session.refreshToken })).status).toBe(204);
      expect((await http().get('/me').set('Authorization', device)).status).toBe(401);
    });

    it('a code approved with a full token still yields a refreshable pair in a new session', async () => {
      const { session } = await createSignedInUser(suite.t, admin());
      const code = await createCode();
      await approve(session.auth, code.user_code);
      const res = await poll(code.device_code);
      expect(res.status).toBe(201);
      expect(res.body.refresh_token).toEqual(expect.any(String));
      expect(decodeJwt(res.body.access_token).sid).not.toBe(decodeJwt(session.accessToken).sid);
    });

    const triggers: [string, (user: { _id: string; password: string }, session: SignedIn) => Promise<void>][] = [
      ['logout-all', async (_user, session) => {
        expect((await http().post('/revoke-token').query({ 'logout-all': true }).send({ token: session.refreshToken })).status).toBe(204);
      }],
      ['own password change', async (user, session) => {
        const res = await http().put(`/memberships/${m()}/users/${user._id}/change-password`).set('Authorization', session.auth).send({ current_password: user.password, password: 'a brand new password' });
        expect(res.status).toBeLessThan(300);
      }],
      ['freeze, then unfreeze', async (user) => {
        expect((await http().post(`/memberships/${m()}/users/${user._id}/freeze`).set('Authorization', admin().auth).send()).status).toBeLessThan(300);
        expect((await http().post(`/memberships/${m()}/users/${user._id}/activate`).set('Authorization', admin().auth).send()).status).toBeLessThan(300);
      }],
      ['PUT is_active: false', async (user) => {
        const current = await http().get(`/memberships/${m()}/users/${user._id}`).set('Authorization', admin().auth);
        const res = await http().put(`/memberships/${m()}/users/${user._id}`).set('Authorization', admin().auth).send(putBodyOf(current.body, { is_active: false }));
        expect(res.status).toBe(200);
      }],
    ];
    it.each(triggers)('%s moves the approved, unpolled code to denied', async (_name, trigger) => {
      const { user, session } = await createSignedInUser(suite.t, admin());
      const code = await createCode();
      await approve(session.auth, code.user_code);
      await trigger(user, session);
      expectErrorBody(await poll(code.device_code), 400, 'AuthorizationDenied');
    });

    it('finds a user code typed with a space (URL-encoded), as with dashes and lower case', async () => {
      const { session } = await createSignedInUser(suite.t, admin());
      const code = await createCode();
      const spaced = `${code.user_code.slice(0, 4)}%20${code.user_code.slice(4).toLowerCase()}`;
      const res = await http().get(`${codesPath()}/${spaced}`).set('Authorization', session.auth);
      expect({ status: res.status, userCode: res.body.user_code }).toEqual({ status: 200, userCode: code.user_code });
    });

    it('a membership PUT that omits code_policy keeps it', async () => {
      const policy = await http().post(`/memberships/${m()}/token-code-policies`).set('Authorization', admin().auth).send({ name: unique('Policy'), length: 6 });
      expect(policy.status).toBe(201);
      await updateMembership(suite.t, suite.tenant, { code_policy: policy.body.slug });
      const kept = await updateMembership(suite.t, suite.tenant, { expires_in: 1800 });
      expect(kept.code_policy).toBe(policy.body.slug);
      const cleared = await updateMembership(suite.t, suite.tenant, { code_policy: null });
      expect(cleared.code_policy).toBeNull();
    });
  });

  describe('provider sign-in: claims', () => {
    let slug: string;
    beforeAll(async () => {
      slug = (await createProvider()).slug;
    });

    const idToken = (claims: JWTPayload): Promise<string> => signIdToken(claims, { issuer: oidc.issuer, audience: CLIENT_ID, key: signingKey.privateKey });
    const login = async (claims: JWTPayload) =>
      http().post(`/oauth/${slug}/login?membership_id=${m()}`).send({ id_token: await idToken(claims) });

    it('refuses a sign-up whose e-mail is another user\'s username (409 UserAlreadyExists), and the victim still signs in', async () => {
      const victimName = `${unique('victim')}@example.com`;
      const victim = await createUser(suite.t, admin(), { username: victimName, email_address: `${unique('other')}@example.com` });
      expectErrorBody(await login({ sub: unique('sub'), email: victimName }), 409, 'UserAlreadyExists');
      expectErrorBody(await login({ sub: unique('sub'), email: victimName.toUpperCase() }), 409, 'UserAlreadyExists');
      expect((await signIn(suite.t, m(), victimName, victim.password)).accessToken).toEqual(expect.any(String));
    });

    it.each([
      ['a NUL in email', { email: 'nul\u0000user@example.com' }],
      ['a line break in given_name', { email: `${unique('cr')}@example.com`, given_name: 'Eve\r\nBcc: x@example.com' }],
      ['a NUL in sub', { sub: 'sub\u0000x' }],
      ['a lone surrogate in family_name', { email: `${unique('sur')}@example.com`, family_name: 'x\ud800y' }],
    ])('answers 401 ProviderTokenInvalid for %s, never 500', async (_name, claims) => {
      expectErrorBody(await login({ sub: unique('sub'), ...claims }), 401, 'ProviderTokenInvalid');
    });

    it('refuses an id token issued more than 60 s in the future, and takes one within the tolerance', async () => {
      const now = Math.floor(Date.now() / 1000);
      expectErrorBody(await login({ sub: unique('sub'), email: `${unique('future')}@example.com`, iat: now + 365 * 86400, exp: now + 366 * 86400 }), 401, 'ProviderTokenInvalid');
      expectErrorBody(await login({ sub: unique('sub'), email: `${unique('future')}@example.com`, iat: now + 120, exp: now + 600 }), 401, 'ProviderTokenInvalid');
      expect((await login({ sub: unique('sub'), email: `${unique('near')}@example.com`, iat: now + 20 })).status).toBe(201);
    });
  });

  describe('a new address ends pending challenges', () => {
    it('a reset token mailed to the old address no longer sets the password once email_address changes', async () => {
      await updateMembership(suite.t, suite.tenant, { mail_providers: [loopbackSmtpProvider(catcher.port)] });
      await createMailhook(suite.t, admin(), {
        event: 'UserPasswordReset',
        mail_subject: 'Reset',
        mail_template: '<a href="https://app.example/reset?token={{reset_token}}">reset</a>',
        send_to_utilizer: true,
      });
      const user = await createUser(suite.t, admin());
      const oldAddress = user.email_address;
      expect((await http().post(`/memberships/${m()}/users/reset-password`).send({ email_address: oldAddress })).status).toBe(202);
      const mail = await eventually(async () => catcher.mailsTo(oldAddress)[0], 'the reset mail', 10_000);
      const token = /token=([\w.-]+)"/.exec(mail.body)?.[1] ?? '';
      expect(token.split('.')).toHaveLength(3);
      const current = await http().get(`/memberships/${m()}/users/${user._id}`).set('Authorization', admin().auth);
      const moved = await http().put(`/memberships/${m()}/users/${user._id}`).set('Authorization', admin().auth).send(putBodyOf(current.body, { email_address: `${unique('new')}@example.com` }));
      expect(moved.status).toBe(200);
      const res = await http().post(`/memberships/${m()}/users/set-password`).send({ reset_token: token, password: 'taken over password' });
      expectErrorBody(res, 401, 'InvalidToken');
      expect((await signIn(suite.t, m(), user.username, user.password)).accessToken).toEqual(expect.any(String));
    });
  });

  describe('addresses and hosts are plain', () => {
    const hostileAddresses = ['"evil\r\nBcc: x@example.com"@example.com', '"quoted"@example.com', 'zero\u200bwidth@example.com', 'nb\u00a0sp@example.com', 'soft\u00adhyphen@example.com'];

    it.each(hostileAddresses)('refuses the user e-mail address %j', async (address) => {
      const res = await http().post(`/memberships/${m()}/users`).set('Authorization', admin().auth).send({ username: unique('plain'), email_address: address, password: 'a long enough password' });
      expectErrorBody(res, 400, 'ModelValidationError');
      expect(res.body.errors).toEqual([{ field: 'email_address', message: 'must be an e-mail address' }]);
    });

    it('refuses such addresses as a mail hook\'s from_address and recipients', async () => {
      await http().put(`/memberships/${m()}`).set('Authorization', admin().auth).send({ name: suite.tenant.membership.name, mail_providers: [loopbackSmtpProvider(catcher.port)] });
      const base = { name: unique('hook'), event: 'UserCreated', mail_provider: 'catcher', mail_subject: 'Hi', mail_template: 'Hi' };
      for (const address of hostileAddresses) {
        const from = await http().post(`/memberships/${m()}/mailhooks`).set('Authorization', admin().auth).send({ ...base, from_address: address, recipients: [{ email_address: 'ok@example.com' }] });
        expectErrorBody(from, 400, 'ModelValidationError');
        const to = await http().post(`/memberships/${m()}/mailhooks`).set('Authorization', admin().auth).send({ ...base, from_address: 'ok@example.com', recipients: [{ email_address: address }] });
        expectErrorBody(to, 400, 'ModelValidationError');
      }
    });

    it.each(['smtp.example.com\r\nRCPT TO:<x@example.com>', 'smtp.example.com:2525', 'smtp example.com', 'smtp.example.com/x', 'smtp_relay.example.com', 'zero\u200bwidth.example.com'])(
      'refuses the SMTP host %j',
      async (host) => {
        const res = await http().put(`/memberships/${m()}`).set('Authorization', admin().auth).send({ name: suite.tenant.membership.name, mail_providers: [{ slug: 'bad', name: 'Bad', type: 'smtp', host }] });
        expectErrorBody(res, 400, 'ModelValidationError');
        expect(res.body.errors).toEqual([{ field: 'mail_providers.0.host', message: 'must be a host name or an IP address, without port' }]);
      },
    );

    it('takes host names (punycode included) and IP literals', async () => {
      for (const host of ['smtp.example.com', 'xn--bcher-kva.example', 'mail', '203.0.113.5', '2001:db8::25', '[2001:db8::25]']) {
        const res = await http().put(`/memberships/${m()}`).set('Authorization', admin().auth).send({ name: suite.tenant.membership.name, mail_providers: [loopbackSmtpProvider(catcher.port), { slug: unique('good'), name: 'Good', type: 'smtp', host }] });
        expect({ host, status: res.status }).toEqual({ host, status: 200 });
      }
    });
  });

  describe('refused destinations say why', () => {
    it('names the range and the setting for a webhook URL, an SMTP host and an issuer', async () => {
      const webhook = await http()
        .post(`/memberships/${m()}/webhooks`)
        .set('Authorization', admin().auth)
        .send(webhookBody('http://127.0.0.2/x', { status: 'passive' }));
      expectErrorBody(webhook, 400, 'ModelValidationError');
      expect(webhook.body.errors).toEqual([{ field: 'request.url', message: 'destination not allowed (loopback; see OUTBOUND_ALLOW)' }]);
      const smtp = await http().put(`/memberships/${m()}`).set('Authorization', admin().auth).send({ name: suite.tenant.membership.name, mail_providers: [{ slug: 'meta', name: 'Meta', type: 'smtp', host: '169.254.169.254' }] });
      expect(smtp.body.errors).toEqual([{ field: 'mail_providers.0.host', message: 'destination not allowed (link-local; see OUTBOUND_ALLOW)' }]);
      const issuer = await http().post(providersPath()).set('Authorization', admin().auth).send(providerBody({ issuer: 'https://10.0.0.5/' }));
      expect(issuer.body.errors).toEqual([{ field: 'issuer', message: 'destination not allowed (private; see OUTBOUND_ALLOW)' }]);
    });
  });
});
