import { eq } from 'drizzle-orm';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { DATABASE, type Database } from '../../src/database/database';
import { users } from '../../src/database/schema';
import { OidcClients } from '../../src/oidc/oidc-clients';
import { OidcTokens } from '../../src/oidc/oidc-tokens';
import { OAuthError } from '../../src/common/oauth-error';
import { as, createApplication, createMembership, createSignedInUser, eventsAbout, expectErrorBody, useInstallation } from '../support/api';

/*
 * The OpenID Provider's token core (docs/oidc.md, "Tokens"), below the grants that use it: RFC 9068
 * access tokens and ID tokens verified with jose's remote JWKS as a resource server would, each
 * issuance a stored record in a session that the service's revocation triggers end, opaque
 * refresh tokens rotated with reuse detection, and no OIDC token accepted by the management API.
 */
describe('OpenID Provider tokens', () => {
  const suite = useInstallation({ publicUrl: true });

  async function grantFixture() {
    const tenant = await createMembership(suite.t, suite.admin);
    const app = await createApplication(suite.t, tenant.admin, {
      oidc: { redirect_uris: ['http://127.0.0.1:9/callback'] },
    } as Record<string, unknown>);
    const { user, session } = await createSignedInUser(suite.t, tenant.admin, { firstname: 'Ada', lastname: 'Lovelace' });
    const client = await suite.t.app.get(OidcClients).find(tenant.membershipId, app.id);
    if (!client) throw new Error('the application is no client');
    const { db } = suite.t.app.get<Database>(DATABASE);
    const [row] = await db.select().from(users).where(eq(users.id, user._id));
    const { passwordHash: _hash, ...record } = row;
    void _hash;
    const issuer = `${suite.t.url}/oidc/${tenant.membershipId}`;
    const tokens = suite.t.app.get(OidcTokens);
    const issue = async (scopes: string[], extra: { nonce?: string; resource?: string } = {}) => {
      const issued = await tokens.issueForUser({
        membershipId: tenant.membershipId,
        client,
        user: record,
        session: 'new',
        scopes,
        authTime: new Date(Date.now() - 5000),
        amr: ['pwd'],
        grant: 'authorization_code',
        metadata: { userAgent: 'jest' },
        ...extra,
      });
      if (!issued) throw new Error('nothing was issued into a new session');
      return issued;
    };
    return { tenant, app, client, user, userSession: session, issuer, tokens, issue, jwks: createRemoteJWKSet(new URL(`${issuer}/jwks`)) };
  }

  it('an access token per RFC 9068 and an ID token, verified with the remote JWKS; TokenGenerated names the grant and client', async () => {
    const f = await grantFixture();
    const { response, tokenId } = await f.issue(['openid', 'profile', 'email', 'offline_access'], { nonce: 'n-123' });
    expect(response).toMatchObject({ token_type: 'Bearer', expires_in: expect.any(Number), scope: 'openid profile email offline_access' });
    const access = await jwtVerify(response.access_token, f.jwks, { issuer: f.issuer, audience: f.app.id, typ: 'at+jwt', algorithms: ['ES256'] });
    expect(access.payload).toMatchObject({ sub: f.user._id, client_id: f.app.id, scope: 'openid profile email offline_access', jti: tokenId, amr: ['pwd'], sid: tokenId });
    expect(access.payload.exp! - access.payload.iat!).toBe(response.expires_in);
    expect(typeof access.payload.auth_time).toBe('number');
    const id = await jwtVerify(response.id_token!, f.jwks, { issuer: f.issuer, audience: f.app.id, algorithms: ['ES256'] });
    expect(id.payload).toMatchObject({
      sub: f.user._id,
      nonce: 'n-123',
      name: 'Ada Lovelace',
      given_name: 'Ada',
      family_name: 'Lovelace',
      preferred_username: f.user.username,
      email: f.user.email_address,
      email_verified: false,
      amr: ['pwd'],
    });
    expect(response.refresh_token).toMatch(new RegExp(`^${tokenId}\\.`));
    const generated = await eventsAbout(suite.t, f.tenant.membershipId, 'TokenGenerated', f.user._id);
    const oidcEvent = generated.find((event) => (event.document).client_id === f.app.id);
    expect(oidcEvent?.document).toMatchObject({ grant: 'authorization_code', client_id: f.app.id });
    expect(JSON.stringify(generated)).not.toContain(response.access_token);
    await expect(f.tokens.verifyAccessToken(f.tenant.membershipId, response.access_token)).resolves.toMatchObject({ record: { id: tokenId } });
  });

  it('without openid no ID token, without offline_access no refresh token; a resource becomes the audience', async () => {
    const f = await grantFixture();
    const { response } = await f.issue(['profile'], { resource: 'https://api.example.com' });
    expect(response.id_token).toBeUndefined();
    expect(response.refresh_token).toBeUndefined();
    expect(decodeJwt(response.access_token).aud).toBe('https://api.example.com');
  });

  it('ES256 access and ID tokens are refused by the management API (401 InvalidToken)', async () => {
    const f = await grantFixture();
    const { response } = await f.issue(['openid', 'profile']);
    for (const token of [response.access_token, response.id_token!]) {
      const res = await as(suite.t, `Bearer ${token}`).get(`/memberships/${f.tenant.membershipId}/users/${f.user._id}`);
      expectErrorBody(res, 401, 'InvalidToken');
      expectErrorBody(await suite.t.http().get('/verify-token').set('Authorization', `Bearer ${token}`), 401, 'InvalidToken');
    }
  });

  it("the verifier takes only this issuer's access tokens: not an ID token, another membership's, alg none or HS256, a changed payload or an unknown kid", async () => {
    const f = await grantFixture();
    const other = await grantFixture();
    const { response } = await f.issue(['openid', 'profile']);
    const refused = (token: string) => expect(f.tokens.verifyAccessToken(f.tenant.membershipId, token)).rejects.toBeInstanceOf(OAuthError);
    expect((await f.tokens.verifyAccessToken(f.tenant.membershipId, response.access_token)).claims.sub).toBe(f.user._id);
    // The ID token is signed by the same key, but its typ is JWT, not at+jwt (RFC 9068 4).
    await refused(response.id_token!);
    // Signed by another membership's key (its own issuer and kid).
    await refused((await other.issue(['openid'])).response.access_token);
    const [header, payload, signature] = response.access_token.split('.');
    const json = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    await refused(`${encode({ ...json(header), alg: 'none' })}.${payload}.`);
    await refused(`${encode({ ...json(header), alg: 'HS256' })}.${payload}.${signature}`);
    await refused(`${header}.${encode({ ...json(payload), sub: other.user._id })}.${signature}`);
    await refused(`${encode({ ...json(header), kid: 'not-a-key' })}.${payload}.${signature}`);
    await refused(`${header}.${payload}`);
    await refused('x'.repeat(9000));
  });

  it("the user's logout-all ends the tokens at once", async () => {
    const f = await grantFixture();
    const { response } = await f.issue(['openid', 'offline_access']);
    // Verified once (its signature is then remembered): the revocation still ends it at once.
    expect((await f.tokens.verifyAccessToken(f.tenant.membershipId, response.access_token)).claims.sub).toBe(f.user._id);
    await suite.t.http().get('/revoke-token?logout-all=true').set('Authorization', f.userSession.auth).expect(204);
    await expect(f.tokens.verifyAccessToken(f.tenant.membershipId, response.access_token)).rejects.toBeInstanceOf(OAuthError);
    expect((await f.tokens.lookupRefreshToken(f.tenant.membershipId, response.refresh_token!))?.state).toBe('revoked');
  });

  it('a refresh rotates the record; the rotated token is recognised as a reuse; revoking the grant ends its newest tokens', async () => {
    const f = await grantFixture();
    const first = await f.issue(['openid', 'offline_access']);
    const found = await f.tokens.lookupRefreshToken(f.tenant.membershipId, first.response.refresh_token!);
    expect(found?.state).toBe('active');
    const second = await f.tokens.rotate(found!, { membershipId: f.tenant.membershipId, client: f.client, user: found!.user!, scopes: ['openid', 'offline_access'], metadata: {} });
    expect(second.response.refresh_token).toBeDefined();
    expect((await f.tokens.lookupRefreshToken(f.tenant.membershipId, first.response.refresh_token!))?.state).toBe('rotated');
    expect(await f.tokens.lookupRefreshToken(f.tenant.membershipId, `${first.tokenId}.wrong`)).toBeUndefined();
    const refreshedId = decodeJwt(second.response.id_token!);
    expect(refreshedId.auth_time).toBe(decodeJwt(first.response.id_token!).auth_time);
    await expect(f.tokens.rotate(found!, { membershipId: f.tenant.membershipId, client: f.client, user: found!.user!, scopes: ['openid'], metadata: {} })).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(f.tokens.verifyAccessToken(f.tenant.membershipId, second.response.access_token)).rejects.toBeInstanceOf(OAuthError);
    const revoked = await eventsAbout(suite.t, f.tenant.membershipId, 'TokenRevoked', f.user._id);
    expect(revoked.some((event) => (event.document).reason === 'refresh_token_reuse')).toBe(true);
  });
});
