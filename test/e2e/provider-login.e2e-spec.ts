import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { decodeProtectedHeader, type JWTPayload, SignJWT } from 'jose';
import { type ApiObject, as, createRole, createUser, createUserType, expectErrorBody, unique, useTenants } from '../support/api';
import { authorizationCode, newSigningKey, pkcePair, signIdToken, startOidcProvider, type OidcTestProvider, type SigningPrivateKey } from '../support/oidc-provider';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

const CLIENT_ID = 'portcullis-test-client';
const CLIENT_SECRET = 'provider-client-secret-0123456789-abcdefghijklmnop';
// Never called: the flow stops at the redirect and hands the code to the service.
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

describe('sign-in with an external OpenID Connect provider (POST /oauth/{slug}/login)', () => {
  const suite = useTenants({ env: { ...ALLOW_LOOPBACK_RECEIVERS, PROVIDER_TIMEOUT_MS: '2000' } });
  let oidc: OidcTestProvider;
  let signingKey: Awaited<ReturnType<typeof newSigningKey>>;
  let slug: string;
  const accounts: Record<string, Record<string, unknown>> = {
    'alice-sub': { email: 'alice.provider@example.com', email_verified: true, given_name: 'Alice', family_name: 'Liddell' },
  };

  const providerOptions = (keys: ApiObject[], port?: number) => ({
    keys,
    port,
    // client_secret_basic only: the provider refuses a secret sent in the form for this client.
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'client_secret_basic' }],
    accounts,
  });

  beforeAll(async () => {
    signingKey = await newSigningKey('key-1');
    oidc = await startOidcProvider(providerOptions([signingKey.privateJwk]));
    const created = await createProvider({ issuer: oidc.issuer, client_secret: CLIENT_SECRET });
    slug = created.slug;
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await oidc?.stop();
  });

  const admin = (): string => suite.tenant.admin.auth;

  async function createProvider(overrides: Record<string, unknown> = {}): Promise<ApiObject> {
    const res = await suite.t
      .http()
      .post(`/memberships/${suite.tenant.membershipId}/providers`)
      .set('Authorization', admin())
      .send({ name: unique('Local OIDC'), type: 'oidc', issuer: oidc.issuer, client_id: CLIENT_ID, ...overrides });
    if (res.status !== 201) throw new Error(`create provider: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  const login = (body: unknown, providerSlug = slug) =>
    suite.t.http().post(`/oauth/${providerSlug}/login?membership_id=${suite.tenant.membershipId}`).set('Content-Type', 'application/json').send(JSON.stringify(body));

  /** An id token as the provider would sign it (its own key), with claims changed as a test needs. */
  function idToken(claims: JWTPayload, options: { key?: SigningPrivateKey; kid?: string; alg?: string } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ email_verified: true, ...claims })
      .setProtectedHeader({ alg: options.alg ?? 'RS256', kid: options.kid ?? 'key-1' })
      .setIssuer(claims.iss ?? oidc.issuer)
      .setAudience(claims.aud ?? CLIENT_ID)
      .setIssuedAt(claims.iat ?? now)
      .setExpirationTime(claims.exp ?? now + 300)
      .sign(options.key ?? signingKey.privateKey);
  }

  async function eventsWhere(where: Record<string, unknown>): Promise<ApiObject[]> {
    const res = await suite.t.http().post(`/memberships/${suite.tenant.membershipId}/events/_query`).set('Authorization', admin()).send({ where });
    expect(res.status).toBe(200);
    return res.body.items;
  }

  async function usersWithEmail(email: string): Promise<ApiObject[]> {
    const res = await suite.t.http().post(`/memberships/${suite.tenant.membershipId}/users/_query`).set('Authorization', admin()).send({ where: { email_address: email } });
    return res.body.items;
  }

  describe('authorization code with PKCE, driven over HTTP at the real provider', () => {
    it('the first sign-in creates the user; the second finds it by sub', async () => {
      const first = pkcePair();
      const code = await authorizationCode(oidc, { clientId: CLIENT_ID, redirectUri: REDIRECT_URI, accountId: 'alice-sub', codeChallenge: first.challenge, nonce: 'n-1' });
      const res = await login({ code, redirect_uri: REDIRECT_URI, code_verifier: first.verifier, nonce: 'n-1' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String), refresh_token: expect.any(String) });
      const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${res.body.access_token}`);
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ username: 'alice.provider@example.com', email_address: 'alice.provider@example.com', firstname: 'Alice', lastname: 'Liddell', source_provider: slug });
      const created = await eventsWhere({ event_type: 'UserCreated', 'document._id': me.body._id });
      expect(created).toHaveLength(1);
      expect(created[0].utilizer_id).toBe('system');
      const generated = await eventsWhere({ event_type: 'TokenGenerated', 'document.user._id': me.body._id });
      expect(generated[0].document).toMatchObject({ grant: 'provider', provider: slug });
      // No provider token is stored or shown: the event log does not hold the code or any id token.
      const everything = JSON.stringify(await eventsWhere({ 'document.user._id': me.body._id }));
      expect(everything).not.toContain(code);
      expect(everything).not.toContain(CLIENT_SECRET);

      const second = pkcePair();
      const again = await authorizationCode(oidc, { clientId: CLIENT_ID, redirectUri: REDIRECT_URI, accountId: 'alice-sub', codeChallenge: second.challenge });
      const res2 = await login({ code: again, redirect_uri: REDIRECT_URI, code_verifier: second.verifier });
      expect(res2.status).toBe(201);
      const me2 = await suite.t.http().get('/me').set('Authorization', `Bearer ${res2.body.access_token}`);
      expect(me2.body._id).toBe(me.body._id);
      expect(await eventsWhere({ event_type: 'UserCreated', 'document._id': me.body._id })).toHaveLength(1);
    });

    it('a code with the wrong PKCE verifier is refused by the token endpoint (401 ProviderTokenInvalid)', async () => {
      const pair = pkcePair();
      const code = await authorizationCode(oidc, { clientId: CLIENT_ID, redirectUri: REDIRECT_URI, accountId: 'alice-sub', codeChallenge: pair.challenge });
      expectErrorBody(await login({ code, redirect_uri: REDIRECT_URI, code_verifier: pkcePair().verifier }), 401, 'ProviderTokenInvalid');
    });

    it('the code mode needs a client secret on the provider (400 ModelValidationError)', async () => {
      const withoutSecret = await createProvider();
      expectErrorBody(await login({ code: 'x', redirect_uri: REDIRECT_URI }, withoutSecret.slug), 400, 'ModelValidationError');
    });
  });

  describe('id_token', () => {
    it('signs up a new subject once and finds it by sub afterwards, whatever its e-mail claim says later', async () => {
      const sub = unique('sub');
      const email = `${sub}@example.com`;
      const first = await login({ id_token: await idToken({ sub, email }) });
      expect(first.status).toBe(201);
      const [user] = await usersWithEmail(email);
      expect(user.username).toBe(email);
      const second = await login({ id_token: await idToken({ sub, email: `changed-${email}` }) });
      expect(second.status).toBe(201);
      const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${second.body.access_token}`);
      expect(me.body._id).toBe(user._id);
      expect(await usersWithEmail(`changed-${email}`)).toEqual([]);
    });

    it('refuses sign-up without a verified e-mail (400 ProviderEmailNotVerified)', async () => {
      const sub = unique('sub');
      expectErrorBody(await login({ id_token: await idToken({ sub, email: `${sub}@example.com`, email_verified: false }) }), 400, 'ProviderEmailNotVerified');
      expectErrorBody(await login({ id_token: await idToken({ sub }) }), 400, 'ProviderEmailNotVerified');
      expect(await usersWithEmail(`${sub}@example.com`)).toEqual([]);
    });

    it('links by e-mail only when the provider has trust_email and the e-mail is verified', async () => {
      const existing = await createUser(suite.t, suite.tenant.admin);
      const sub = unique('sub');
      // Not trusted: 409 whatever email_verified says.
      expectErrorBody(await login({ id_token: await idToken({ sub, email: existing.email_address }) }), 409, 'ProviderEmailNotTrusted');
      const trusted = await createProvider({ trust_email: true });
      expectErrorBody(await login({ id_token: await idToken({ sub, email: existing.email_address, email_verified: false }) }, trusted.slug), 400, 'ProviderEmailNotVerified');
      const linked = await login({ id_token: await idToken({ sub, email: existing.email_address }) }, trusted.slug);
      expect(linked.status).toBe(201);
      const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${linked.body.access_token}`);
      expect(me.body._id).toBe(existing._id);
      // Linked now: found by sub even without an e-mail claim.
      const bySub = await login({ id_token: await idToken({ sub }) }, trusted.slug);
      expect(bySub.status).toBe(201);
    });

    it('a user signed up through a provider has no usable password', async () => {
      const sub = unique('sub');
      expect((await login({ id_token: await idToken({ sub, email: `${sub}@example.com` }) })).status).toBe(201);
      const res = await suite.t.http().post('/generate-token').set('X-Service-Alias', suite.tenant.membershipId).send({ username: `${sub}@example.com`, password: '!unusable-' });
      expectErrorBody(res, 401, 'InvalidCredentials');
    });

    it('gives new users the default role and user type of the provider', async () => {
      const role = await createRole(suite.t, suite.tenant.admin, { permissions: ['users.read'] });
      const withRole = await createProvider({ default_role: role.slug });
      const sub = unique('sub');
      const res = await login({ id_token: await idToken({ sub, email: `${sub}@example.com` }) }, withRole.slug);
      expect(res.status).toBe(201);
      const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${res.body.access_token}`);
      expect(me.body.role).toBe(role.slug);
    });

    it('two first sign-ins of one new subject at once make one user; both get tokens for it', async () => {
      const sub = unique('racing');
      const email = `${sub}@example.com`;
      const tokens = await Promise.all(Array.from({ length: 4 }, () => idToken({ sub, email })));
      const answers = await Promise.all(tokens.map((token) => login({ id_token: token })));
      expect(answers.map((res) => res.status)).toEqual([201, 201, 201, 201]);
      const users = await usersWithEmail(email);
      expect(users).toHaveLength(1);
      for (const res of answers) {
        const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${res.body.access_token}`);
        expect(me.body._id).toBe(users[0]._id);
      }
      expect(await eventsWhere({ event_type: 'UserCreated', 'document._id': users[0]._id })).toHaveLength(1);
    });

    it('two first sign-ins of different subjects with one e-mail at once: one signs up, the other links (trust_email) or is refused as untrusted', async () => {
      for (const [trust, second] of [
        [true, 201],
        [false, 409],
      ] as const) {
        const provider = await createProvider({ trust_email: trust });
        const email = `${unique('shared')}@example.com`;
        const tokens = await Promise.all([unique('one'), unique('two')].map((sub) => idToken({ sub, email })));
        const answers = await Promise.all(tokens.map((token) => login({ id_token: token }, provider.slug)));
        expect(answers.map((res) => res.status).sort()).toEqual([201, second].sort());
        if (second === 409) expectErrorBody(answers.find((res) => res.status === 409)!, 409, 'ProviderEmailNotTrusted');
        expect(await usersWithEmail(email)).toHaveLength(1);
      }
    });

    it('signs a new subject up inactive under user_activation passive (401 UserInactive) until it is activated', async () => {
      const setActivation = (mode: string) =>
        suite.t.http().put(`/memberships/${suite.tenant.membershipId}`).set('Authorization', admin()).send({ name: suite.tenant.membership.name, user_activation: mode });
      expect((await setActivation('passive')).status).toBe(200);
      try {
        const sub = unique('passive');
        const email = `${sub}@example.com`;
        expectErrorBody(await login({ id_token: await idToken({ sub, email }) }), 401, 'UserInactive');
        const [user] = await usersWithEmail(email);
        expect(user).toMatchObject({ is_active: false, source_provider: slug });
        const [created] = await eventsWhere({ event_type: 'UserCreated', 'document._id': user._id });
        expect(created.document.is_active).toBe(false);
        // The link is made: once an administrator activates the user, the same subject signs in.
        const activated = await suite.t.http().post(`/memberships/${suite.tenant.membershipId}/users/${user._id}/activate`).set('Authorization', admin());
        expect(activated.status).toBeLessThan(300);
        const again = await login({ id_token: await idToken({ sub, email }) });
        expect(again.status).toBe(201);
        expect(await usersWithEmail(email)).toHaveLength(1);
      } finally {
        expect((await setActivation('active')).status).toBe(200);
      }
    });

    it("applies the default user type's custom-field rules to signed-up users, as POST users does", async () => {
      const type = await createUserType(suite.t, suite.tenant.admin, {
        properties: { department: { type: 'string', default: 'sales' }, level: { type: 'integer', default: 1 }, badge: { type: 'string', unique: true } },
      });
      const provider = await createProvider({ default_user_type: type.slug });
      const sub = unique('typed');
      const res = await login({ id_token: await idToken({ sub, email: `${sub}@example.com` }) }, provider.slug);
      expect(res.status).toBe(201);
      const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${res.body.access_token}`);
      expect(me.body).toMatchObject({ user_type: type.slug, department: 'sales', level: 1 });
      expect(me.body).not.toHaveProperty('badge');
      const [created] = await eventsWhere({ event_type: 'UserCreated', 'document._id': me.body._id });
      expect(created.document).toMatchObject({ user_type: type.slug, department: 'sales', level: 1 });
    });

    it('refuses to sign up into a user type that gained a required custom field without a default (400 naming it), and creates nobody', async () => {
      const type = await createUserType(suite.t, suite.tenant.admin, { properties: { department: { type: 'string', default: 'sales' } } });
      const provider = await createProvider({ default_user_type: type.slug, trust_email: true });
      // Provider creation refuses such a type; it can still gain the field afterwards.
      const changed = await as(suite.t, suite.tenant.admin).put(`/memberships/${suite.tenant.membershipId}/user-types/${type._id}`, {
        name: type.name,
        properties: { employee_no: { type: 'string', required: true }, department: { type: 'string', default: 'sales' } },
      });
      expect(changed.status).toBe(200);
      const sub = unique('untyped');
      const res = await login({ id_token: await idToken({ sub, email: `${sub}@example.com` }) }, provider.slug);
      expectErrorBody(res, 400, 'ModelValidationError');
      expect(res.body.errors).toEqual([{ field: 'employee_no', message: 'is required' }]);
      expect(res.body.message).toContain(type.slug);
      expect(await usersWithEmail(`${sub}@example.com`)).toEqual([]);
      // Linking to an existing user signs up nobody: the rule does not stand in its way.
      const existing = await createUser(suite.t, suite.tenant.admin);
      const linked = await login({ id_token: await idToken({ sub: unique('linking'), email: existing.email_address }) }, provider.slug);
      expect(linked.status).toBe(201);
    });

    describe('refuses tokens an attacker could send (401 ProviderTokenInvalid)', () => {
      const now = (): number => Math.floor(Date.now() / 1000);
      const cases: [string, () => Promise<unknown>][] = [
        ['for another client (aud)', async () => ({ id_token: await idToken({ sub: unique('s'), email: `${unique('e')}@example.com`, aud: 'another-client' }) })],
        ['with several audiences and azp of another client', async () => ({ id_token: await idToken({ sub: unique('s'), aud: [CLIENT_ID, 'other'], azp: 'other' }) })],
        ['from another issuer', async () => ({ id_token: await idToken({ sub: unique('s'), iss: 'https://accounts.google.com' }) })],
        ['expired (past the 60 s tolerance)', async () => ({ id_token: await idToken({ sub: unique('s'), iat: now() - 600, exp: now() - 120 }) })],
        ['with a wrong nonce', async () => ({ id_token: await idToken({ sub: unique('s'), nonce: 'token-nonce' }), nonce: 'other-nonce' })],
        ['with a nonce in the body only', async () => ({ id_token: await idToken({ sub: unique('s') }), nonce: 'body-nonce' })],
        ['with a nonce in the token only', async () => ({ id_token: await idToken({ sub: unique('s'), nonce: 'token-nonce' }) })],
        ['signed by a key not in the JWKS (same kid)', async () => ({ id_token: await idToken({ sub: unique('s') }, { key: (await newSigningKey('key-1')).privateKey }) })],
        ['signed by a key not in the JWKS (unknown kid)', async () => ({ id_token: await idToken({ sub: unique('s') }, { key: (await newSigningKey('stranger')).privateKey, kid: 'stranger' }) })],
        ['signed with HS256 using the client secret', async () => ({ id_token: await hs256WithClientSecret({ sub: unique('s') }) })],
        ['with alg none', async () => ({ id_token: unsigned({ sub: unique('s') }) })],
        ['that is not a JWT', async () => ({ id_token: 'not-a-token' })],
      ];
      it.each(cases)('a token %s', async (_name, body) => {
        const res = await login(await body());
        expectErrorBody(res, 401, 'ProviderTokenInvalid');
        expect(res.body.message).toBe('The identity provider token is not valid');
      });
    });

    it('refuses identity fields sent in the body (400) and signs nobody in by them', async () => {
      const victim = await createUser(suite.t, suite.tenant.admin);
      const token = await idToken({ sub: unique('s'), email: `${unique('x')}@example.com` });
      for (const extra of [{ email: victim.email_address }, { sub: 'alice-sub' }, { email_verified: true }, { user_id: victim._id }]) {
        expectErrorBody(await login({ id_token: token, ...extra }), 400, 'ModelValidationError');
      }
      expectErrorBody(await login({ email: victim.email_address, sub: 'x' }), 400, 'ModelValidationError');
      expectErrorBody(await login({ id_token: token, code: 'x', redirect_uri: REDIRECT_URI }), 400, 'ModelValidationError');
    });
  });

  describe('token endpoint client authentication', () => {
    it('sends the secret in the form (client_secret_post) to a provider that offers only that', async () => {
      const postOnly = await startOidcProvider({
        keys: [signingKey.privateJwk],
        clientAuthMethods: ['client_secret_post'],
        clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'client_secret_post' }],
        // A subject of its own: alice's e-mail already belongs to the user the other provider signed up.
        accounts: { 'post-sub': { email: 'post.only@example.com', email_verified: true } },
      });
      try {
        const discovery = (await (await fetch(`${postOnly.issuer}/.well-known/openid-configuration`)).json()) as ApiObject;
        expect(discovery.token_endpoint_auth_methods_supported).toEqual(['client_secret_post']);
        const provider = await createProvider({ issuer: postOnly.issuer, client_secret: CLIENT_SECRET });
        const pair = pkcePair();
        const code = await authorizationCode(postOnly, { clientId: CLIENT_ID, redirectUri: REDIRECT_URI, accountId: 'post-sub', codeChallenge: pair.challenge });
        const res = await login({ code, redirect_uri: REDIRECT_URI, code_verifier: pair.verifier }, provider.slug);
        expect(res.status).toBe(201);
        const me = await suite.t.http().get('/me').set('Authorization', `Bearer ${res.body.access_token}`);
        expect(me.body).toMatchObject({ email_address: 'post.only@example.com', source_provider: provider.slug });
      } finally {
        await postOnly.stop();
      }
    });

    it('sends the secret in the Authorization header (client_secret_basic) to a provider that offers it', async () => {
      const discovery = (await (await fetch(`${oidc.issuer}/.well-known/openid-configuration`)).json()) as ApiObject;
      expect(discovery.token_endpoint_auth_methods_supported).toContain('client_secret_basic');
      const pair = pkcePair();
      const code = await authorizationCode(oidc, { clientId: CLIENT_ID, redirectUri: REDIRECT_URI, accountId: 'alice-sub', codeChallenge: pair.challenge });
      expect((await login({ code, redirect_uri: REDIRECT_URI, code_verifier: pair.verifier })).status).toBe(201);
    });
  });

  describe('provider state', () => {
    it('a disabled provider answers 403 ProviderDisabled; an unknown slug 404; no membership 400; unknown membership 404', async () => {
      const disabled = await createProvider({ is_active: false });
      expectErrorBody(await login({ id_token: await idToken({ sub: 'alice-sub' }) }, disabled.slug), 403, 'ProviderDisabled');
      expectErrorBody(await login({ id_token: 'x' }, 'no-such-provider'), 404, 'ProviderNotFound');
      expectErrorBody(await suite.t.http().post(`/oauth/${slug}/login`).send({ id_token: 'x' }), 400, 'MembershipIdRequired');
      expectErrorBody(await suite.t.http().post(`/oauth/${slug}/login?membership_id=${unique('nope')}`).send({ id_token: 'x' }), 404, 'MembershipNotFound');
      const viaHeader = await suite.t.http().post(`/oauth/${slug}/login`).set('X-Service-Alias', suite.tenant.membershipId).send({ id_token: await idToken({ sub: 'alice-sub' }) });
      expect(viaHeader.status).toBe(201);
    });

    it('deactivating a provider shows at once on this instance', async () => {
      const created = await createProvider();
      const token = await idToken({ sub: 'alice-sub', email: 'alice.provider@example.com' });
      expect((await login({ id_token: token }, created.slug)).status).not.toBe(403);
      const { name, type, issuer, client_id } = created;
      const res = await suite.t.http().put(`/memberships/${suite.tenant.membershipId}/providers/${created._id}`).set('Authorization', admin()).send({ name, type, issuer, client_id, is_active: false });
      expect(res.status).toBe(200);
      expectErrorBody(await login({ id_token: token }, created.slug), 403, 'ProviderDisabled');
    });

    it('an issuer that does not answer is 502 ProviderUnavailable', async () => {
      // A loopback port nobody listens on (the provider is allowed, the connection is refused).
      const gone = await createProvider({ issuer: 'http://127.0.0.1:9/' });
      expectErrorBody(await login({ id_token: await idToken({ sub: 'alice-sub', iss: 'http://127.0.0.1:9/' }) }, gone.slug), 502, 'ProviderUnavailable');
    });

    it('a slow, broken or redirecting provider is 502 ProviderUnavailable', async () => {
      const sockets = new Set<Socket>();
      const broken = createServer((request, response) => {
        const [, kind] = (request.url ?? '').split('/');
        const issuer = `http://127.0.0.1:${(broken.address() as AddressInfo).port}/${kind}`;
        if (kind === 'slow') return; // never answers: the call times out (PROVIDER_TIMEOUT_MS)
        if (kind === 'redirect') return response.writeHead(302, { location: `${oidc.issuer}/.well-known/openid-configuration` }).end();
        if (kind === 'not-json') return response.writeHead(200, { 'content-type': 'application/json' }).end('{"issuer": ');
        if (kind === 'error') return response.writeHead(503).end();
        if (kind === 'other-issuer') return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: oidc.issuer, jwks_uri: `${oidc.issuer}/jwks` }));
        if (kind === 'bad-jwks' && request.url?.endsWith('/jwks')) return response.writeHead(200).end('{"keys": "none"}');
        if (kind === 'bad-jwks') return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks` }));
        response.writeHead(404).end();
      });
      broken.on('connection', (socket) => {
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
      });
      await new Promise<void>((resolve) => broken.listen(0, '127.0.0.1', resolve));
      try {
        const port = (broken.address() as AddressInfo).port;
        for (const kind of ['slow', 'redirect', 'not-json', 'error', 'other-issuer', 'bad-jwks']) {
          const issuer = `http://127.0.0.1:${port}/${kind}`;
          const provider = await createProvider({ issuer });
          const res = await login({ id_token: await idToken({ sub: 'alice-sub', iss: issuer }) }, provider.slug);
          expect({ kind, status: res.status, errorCode: res.body.errorCode }).toEqual({ kind, status: 502, errorCode: 'ProviderUnavailable' });
        }
      } finally {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => broken.close(() => resolve()));
      }
    });

    it('counts provider calls in portcullis_outgoing_http_requests_total (kind="provider")', async () => {
      const metrics = await suite.t.http().get('/metrics');
      expect(metrics.status).toBe(200);
      expect(metrics.text).toMatch(/portcullis_outgoing_http_requests_total\{[^}]*kind="provider"[^}]*outcome="success"[^}]*\} [1-9]/);
      expect(metrics.text).toMatch(/portcullis_outgoing_http_requests_total\{[^}]*kind="provider"[^}]*outcome="timeout"[^}]*\} [1-9]/);
    });

    it('deleting a provider deletes its links; the users stay', async () => {
      const temporary = await createProvider();
      const sub = unique('temp');
      const res = await login({ id_token: await idToken({ sub, email: `${sub}@example.com` }) }, temporary.slug);
      expect(res.status).toBe(201);
      expect((await suite.t.http().delete(`/memberships/${suite.tenant.membershipId}/providers/${temporary._id}`).set('Authorization', admin())).status).toBe(204);
      expect(await usersWithEmail(`${sub}@example.com`)).toHaveLength(1);
      // A new provider under the same slug does not inherit the link: the subject is a stranger whose
      // e-mail belongs to an existing user, and this provider is not trusted to link it.
      await createProvider({ slug: temporary.slug });
      expectErrorBody(await login({ id_token: await idToken({ sub, email: `${sub}@example.com` }) }, temporary.slug), 409, 'ProviderEmailNotTrusted');
    });

    it("re-pointing a provider (another client_id or issuer) forgets its links: the same sub then signs in as nobody it linked before", async () => {
      const temporary = await createProvider();
      const sub = unique('repoint');
      const meOf = async (res: { body: ApiObject }) =>
        (await suite.t.http().get('/me').set('Authorization', `Bearer ${String(res.body.access_token)}`)).body._id as string;
      const first = await login({ id_token: await idToken({ sub, email: `${sub}@example.com` }) }, temporary.slug);
      expect(first.status).toBe(201);
      const linked = await meOf(first);
      const path = `/memberships/${suite.tenant.membershipId}/providers/${temporary._id}`;
      const put = await suite.t.http().put(path).set('Authorization', admin())
        .send({ name: temporary.name, type: 'oidc', issuer: oidc.issuer, client_id: 'another-client' });
      expect(put.status).toBe(200);
      const after = await login({ id_token: await idToken({ sub, aud: 'another-client', email: `${sub}.elsewhere@example.com` }) }, temporary.slug);
      expect(after.status).toBe(201);
      expect(await meOf(after)).not.toBe(linked);
    });

    it('an inactive user answers 401 UserInactive', async () => {
      const sub = unique('frozen');
      const first = await login({ id_token: await idToken({ sub, email: `${sub}@example.com` }) });
      expect(first.status).toBe(201);
      const [user] = await usersWithEmail(`${sub}@example.com`);
      const frozen = await suite.t.http().post(`/memberships/${suite.tenant.membershipId}/users/${user._id}/freeze`).set('Authorization', admin());
      expect(frozen.status).toBe(200);
      expectErrorBody(await login({ id_token: await idToken({ sub }) }), 401, 'UserInactive');
    });

    // Last: it leaves the provider stopped.
    it('picks up a rotated key (new kid), and answers 502 ProviderUnavailable once the provider is stopped', async () => {
      const sub = unique('rotated');
      expect((await login({ id_token: await idToken({ sub, email: `${sub}@example.com` }) })).status).toBe(201);
      const newKey = await newSigningKey('key-2');
      await oidc.stop();
      oidc = await startOidcProvider(providerOptions([newKey.privateJwk], oidc.port));
      const rotated = await idToken({ sub }, { key: newKey.privateKey, kid: 'key-2' });
      expect(decodeProtectedHeader(rotated).kid).toBe('key-2');
      // An unknown kid refetches the key set at most once per 30 s: move the clock past that.
      const realNow = Date.now.bind(Date);
      jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 31_000);
      const res = await login({ id_token: rotated });
      expect(res.status).toBe(201);
      // The old key is gone from the provider's set.
      jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 62_000);
      expectErrorBody(await login({ id_token: await idToken({ sub }) }), 401, 'ProviderTokenInvalid');
      jest.restoreAllMocks();

      await oidc.stop();
      // Discovery is cached; a key the app does not know makes it fetch the key set, which fails.
      jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 93_000);
      const unknownKid = await idToken({ sub }, { key: (await newSigningKey('key-3')).privateKey, kid: 'key-3' });
      expectErrorBody(await login({ id_token: unknownKid }), 502, 'ProviderUnavailable');
      jest.restoreAllMocks();
    });

  });

  /** An HS256 token keyed with the client secret: what a client could forge for itself. */
  function hs256WithClientSecret(claims: JWTPayload): Promise<string> {
    return signIdToken(claims, { issuer: oidc.issuer, audience: CLIENT_ID, alg: 'HS256', key: new TextEncoder().encode(CLIENT_SECRET) });
  }

  function unsigned(claims: JWTPayload): string {
    const now = Math.floor(Date.now() / 1000);
    const encode = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    return `${encode({ alg: 'none', kid: 'key-1' })}.${encode({ iss: oidc.issuer, aud: CLIENT_ID, iat: now, exp: now + 300, ...claims })}.`;
  }
});
