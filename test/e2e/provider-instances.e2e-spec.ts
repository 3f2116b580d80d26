import { type JWTPayload, SignJWT } from 'jose';
import type { TestApp } from '../support/app';
import { type ApiObject, expectErrorBody, type Installation, unique } from '../support/api';
import { describeWithServer, useTwoInstances } from '../support/instances';
import { newSigningKey, startOidcProvider, type OidcTestProvider } from '../support/oidc-provider';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

/*
 * Two instances of the service on ONE PostgreSQL database: each caches providers for
 * PROVIDER_CACHE_TTL_SECONDS (contract "External identity providers"), so a change made through
 * one shows on the other within that time. Needs a server database:
 * TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres.
 */

const CACHE_TTL_SECONDS = 2;
const CLIENT_ID = 'instances-client';
const OTHER_CLIENT_ID = 'instances-other-client';

describeWithServer('providers on two instances', () => {
  const instances = useTwoInstances({ ...ALLOW_LOOPBACK_RECEIVERS, PROVIDER_CACHE_TTL_SECONDS: String(CACHE_TTL_SECONDS) });
  let a: TestApp;
  let b: TestApp;
  let install: Installation;
  let oidc: OidcTestProvider;
  let signingKey: Awaited<ReturnType<typeof newSigningKey>>;

  beforeAll(async () => {
    ({ a, b, install } = instances);
    signingKey = await newSigningKey('instances-key');
    oidc = await startOidcProvider({ keys: [signingKey.privateJwk], clients: [], accounts: {} });
  });
  afterAll(async () => {
    await oidc?.stop();
  });

  const providersPath = (): string => `/memberships/${install.admin.membershipId}/providers`;

  async function createProvider(): Promise<ApiObject> {
    const res = await a
      .http()
      .post(providersPath())
      .set('Authorization', install.admin.auth)
      .send({ name: unique('Shared OIDC'), type: 'oidc', issuer: oidc.issuer, client_id: CLIENT_ID });
    if (res.status !== 201) throw new Error(`create provider: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** PUT through A; answers when it was sent: no cached copy anywhere is older than that. */
  async function changeThroughA(provider: ApiObject, changes: Record<string, unknown>): Promise<number> {
    const sentAt = Date.now();
    const { name, type, issuer, client_id, is_active } = provider;
    const res = await a
      .http()
      .put(`${providersPath()}/${provider._id}`)
      .set('Authorization', install.admin.auth)
      .send({ name, type, issuer, client_id, is_active, ...changes });
    expect(res.status).toBe(200);
    return sentAt;
  }

  /** Waits until every copy cached before `since` has expired (the TTL, plus a tick of the clock). */
  async function pastCacheLifetime(since: number): Promise<void> {
    const wait = since + CACHE_TTL_SECONDS * 1000 + 50 - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  function idToken(claims: JWTPayload & { aud?: string }): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({ email_verified: true, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'instances-key' })
      .setIssuer(oidc.issuer)
      .setAudience(claims.aud ?? CLIENT_ID)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(signingKey.privateKey);
  }

  const login = (app: TestApp, slug: string, token: string) =>
    app.http().post(`/oauth/${slug}/login?membership_id=${install.admin.membershipId}`).send({ id_token: token });

  it('a provider disabled through A answers 403 ProviderDisabled on A at once and on B within PROVIDER_CACHE_TTL_SECONDS', async () => {
    const provider = await createProvider();
    const sub = unique('disabled');
    const token = await idToken({ sub, email: `${sub}@example.com` });
    // B signs in now, so it holds the provider in its cache.
    expect((await login(b, provider.slug, token)).status).toBe(201);

    const changedAt = await changeThroughA(provider, { is_active: false });
    expectErrorBody(await login(a, provider.slug, token), 403, 'ProviderDisabled');
    await pastCacheLifetime(changedAt);
    expectErrorBody(await login(b, provider.slug, token), 403, 'ProviderDisabled');

    await changeThroughA({ ...provider, is_active: false }, { is_active: true });
    await pastCacheLifetime(Date.now());
    expect((await login(b, provider.slug, token)).status).toBe(201);
  });

  it('a client_id changed through A is the one B checks the audience against within PROVIDER_CACHE_TTL_SECONDS', async () => {
    const provider = await createProvider();
    const sub = unique('audience');
    const email = `${sub}@example.com`;
    expect((await login(b, provider.slug, await idToken({ sub, email }))).status).toBe(201);

    const changedAt = await changeThroughA(provider, { client_id: OTHER_CLIENT_ID });
    await pastCacheLifetime(changedAt);
    expectErrorBody(await login(b, provider.slug, await idToken({ sub, email })), 401, 'ProviderTokenInvalid');
    // The new client's tokens are taken. Re-pointing ended the old links (docs/providers.md): the
    // same sub is now a stranger whose address an existing user has, which this provider may not link.
    expectErrorBody(await login(b, provider.slug, await idToken({ sub, email, aud: OTHER_CLIENT_ID })), 409, 'ProviderEmailNotTrusted');
    const newcomer = unique('audience');
    const forNewClient = await login(b, provider.slug, await idToken({ sub: newcomer, email: `${newcomer}@example.com`, aud: OTHER_CLIENT_ID }));
    expect(forNewClient.status).toBe(201);
  });
});
