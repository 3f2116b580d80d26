import { and, asc, eq, sql } from 'drizzle-orm';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { DATABASE, type Database } from '../../src/database/database';
import { events } from '../../src/database/schema';
import type { TestApp } from '../support/app';
import { createApplication, createMembership, useInstallation } from '../support/api';

/*
 * The client_credentials grant, RFC 7662 introspection and RFC 7009 revocation of client tokens at
 * a membership's issuer (contract "Single sign-on"), driven by openid-client as an application
 * would, the tokens verified with jose's remote JWKS. No mocks.
 */

async function eventsOfClient(t: TestApp, membershipId: string, eventType: string, clientId: string) {
  const { db } = t.app.get<Database>(DATABASE);
  return db
    .select()
    .from(events)
    .where(and(eq(events.membershipId, membershipId), eq(events.eventType, eventType), sql`${events.document} ->> 'client_id' = ${clientId}`))
    .orderBy(asc(events.eventTime));
}

describe('OpenID Provider: client_credentials, introspection and revocation of client tokens', () => {
  const suite = useInstallation({ publicUrl: true });

  async function tenantWithClient(oidc: Record<string, unknown> = { grant_types: ['client_credentials'] }) {
    const tenant = await createMembership(suite.t, suite.admin);
    const app = await createApplication(suite.t, tenant.admin, { oidc: { redirect_uris: ['http://127.0.0.1:9/callback'], ...oidc } } as Record<string, unknown>);
    const issuer = `${suite.t.url}/oidc/${tenant.membershipId}`;
    return { tenant, app, issuer };
  }

  async function configurationOf(issuer: string, clientId: string, secret?: string): Promise<client.Configuration> {
    return client.discovery(new URL(issuer), clientId, secret, secret === undefined ? client.None() : undefined, { execute: [client.allowInsecureRequests] });
  }

  it('openid-client gets an RFC 9068 token for the client itself; jose verifies it from the JWKS; TokenGenerated names the grant and the client', async () => {
    const { tenant, app, issuer } = await tenantWithClient();
    const config = await configurationOf(issuer, app.id, app.secret);
    const before = Math.floor(Date.now() / 1000);
    const tokens = await client.clientCredentialsGrant(config);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.expires_in).toBe(tenant.membership.expires_in);

    const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, { issuer, audience: app.id, typ: 'at+jwt', algorithms: ['ES256'] });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) });
    expect(payload).toMatchObject({ iss: issuer, sub: app.id, aud: app.id, client_id: app.id, scope: '', jti: expect.any(String) });
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect((payload.exp as number) - (payload.iat as number)).toBe(tenant.membership.expires_in);

    const generated = await eventsOfClient(suite.t, tenant.membershipId, 'TokenGenerated', app.id);
    expect(generated).toHaveLength(1);
    expect(generated[0].utilizerId).toBe(app.id);
    expect(generated[0].document).toMatchObject({ grant: 'client_credentials', client_id: app.id, token_id: payload.jti, expires_in: tenant.membership.expires_in });
    expect(JSON.stringify(generated[0].document)).not.toContain(tokens.access_token);
  });

  it('RFC 8707: a resource becomes the audience; a relative or fragment resource is invalid_target', async () => {
    const { app, issuer } = await tenantWithClient();
    const config = await configurationOf(issuer, app.id, app.secret);
    const tokens = await client.clientCredentialsGrant(config, { resource: 'https://api.example.com/' });
    const { payload } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(`${issuer}/jwks`)), { issuer, audience: 'https://api.example.com/' });
    expect(payload.client_id).toBe(app.id);
    for (const resource of ['/relative', 'https://api.example.com/#part', 'not a uri']) {
      const res = await suite.t.http().post(`/oidc/${app.membershipId}/token`).auth(app.id, app.secret).type('form').send({ grant_type: 'client_credentials', resource });
      expect({ resource, status: res.status, error: res.body.error }).toEqual({ resource, status: 400, error: 'invalid_target' });
    }
  });

  it('no user scope for a client alone: openid, profile, email, offline_access and unknown scopes are invalid_scope', async () => {
    const { app, issuer } = await tenantWithClient();
    const config = await configurationOf(issuer, app.id, app.secret);
    for (const scope of ['openid', 'profile', 'email', 'offline_access', 'users.read', 'x"y']) {
      const error = await client.clientCredentialsGrant(config, { scope }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(client.ResponseBodyError);
      expect({ scope, error: (error as client.ResponseBodyError).error, status: (error as client.ResponseBodyError).status }).toEqual({ scope, error: 'invalid_scope', status: 400 });
    }
  });

  it('a wrong client secret is 401 invalid_client with a Basic challenge, at the token, introspection and revocation endpoints', async () => {
    const { app, issuer } = await tenantWithClient();
    const wrong = await configurationOf(issuer, app.id, 'not-the-secret');
    const error = await client.clientCredentialsGrant(wrong).catch((caught: unknown) => caught);
    // openid-client reports a 401 with a challenge as such (the Basic challenge is the contract's).
    expect(error).toBeInstanceOf(client.WWWAuthenticateChallengeError);
    expect((error as client.WWWAuthenticateChallengeError).status).toBe(401);
    expect((error as client.WWWAuthenticateChallengeError).cause[0]?.scheme).toBe('basic');
    const raw = await suite.t.http().post(`/oidc/${app.membershipId}/token`).auth(app.id, 'not-the-secret').type('form').send({ grant_type: 'client_credentials' });
    expect({ status: raw.status, error: raw.body.error }).toEqual({ status: 401, error: 'invalid_client' });
    for (const route of ['introspect', 'revoke', 'device/authorize']) {
      const res = await suite.t.http().post(`/oidc/${app.membershipId}/${route}`).auth(app.id, 'not-the-secret').type('form').send({ token: 'x' });
      expect({ route, status: res.status, body: res.body }).toEqual({ route, status: 401, body: { error: 'invalid_client', error_description: expect.any(String) } });
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
    }
  });

  it('a public client is refused client_credentials; a client without the grant is unauthorized_client', async () => {
    const { app: publicApp, issuer } = await tenantWithClient({ public: true, grant_types: ['authorization_code'] });
    const asPublic = await suite.t.http().post(`/oidc/${publicApp.membershipId}/token`).type('form').send({ grant_type: 'client_credentials', client_id: publicApp.id });
    expect(asPublic.status).toBe(400);
    expect(asPublic.body.error).toBe('unauthorized_client');
    const viaLibrary = await client.clientCredentialsGrant(await configurationOf(issuer, publicApp.id)).catch((caught: unknown) => caught);
    expect((viaLibrary as client.ResponseBodyError).error).toBe('unauthorized_client');

    const { app: codeOnly, issuer: codeIssuer } = await tenantWithClient({ grant_types: ['authorization_code', 'refresh_token'] });
    const error = await client.clientCredentialsGrant(await configurationOf(codeIssuer, codeOnly.id, codeOnly.secret)).catch((caught: unknown) => caught);
    expect((error as client.ResponseBodyError).error).toBe('unauthorized_client');
  });

  it('introspection: the token active with its facts; after the client revokes it, inactive; TokenRevoked names the grant and the client', async () => {
    const { tenant, app, issuer } = await tenantWithClient();
    const config = await configurationOf(issuer, app.id, app.secret);
    const { access_token: token } = await client.clientCredentialsGrant(config);
    const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(`${issuer}/jwks`)));

    const active = await client.tokenIntrospection(config, token);
    expect(active).toMatchObject({ active: true, sub: app.id, client_id: app.id, scope: '', iss: issuer, token_type: 'Bearer', exp: payload.exp, iat: payload.iat, jti: payload.jti });
    expect(await client.tokenIntrospection(config, token, { token_type_hint: 'refresh_token' })).toMatchObject({ active: true });

    await client.tokenRevocation(config, token, { token_type_hint: 'access_token' });
    expect(await client.tokenIntrospection(config, token)).toEqual({ active: false });
    // Revoking again is 200 and records nothing more.
    await client.tokenRevocation(config, token);
    const revoked = await eventsOfClient(suite.t, tenant.membershipId, 'TokenRevoked', app.id);
    expect(revoked).toHaveLength(1);
    expect(revoked[0]).toMatchObject({ utilizerId: app.id, document: { grant: 'client_credentials', client_id: app.id, token_id: payload.jti } });
  });

  it("rotating the application's secret ends its client tokens (TokenRevoked); deactivating or deleting it makes them inactive", async () => {
    const { tenant, app, issuer } = await tenantWithClient();
    const resource = await createApplication(suite.t, tenant.admin, { oidc: { redirect_uris: ['http://127.0.0.1:9/cb'], grant_types: ['client_credentials'] } } as Record<string, unknown>);
    const resourceConfig = await configurationOf(issuer, resource.id, resource.secret);
    const { access_token: before } = await client.clientCredentialsGrant(await configurationOf(issuer, app.id, app.secret));
    const rotated = await suite.t.http().post(`/memberships/${tenant.membershipId}/applications/${app.id}/secret`).set('Authorization', tenant.admin.auth);
    expect(rotated.status).toBeLessThan(300);
    expect(await client.tokenIntrospection(resourceConfig, before)).toEqual({ active: false });
    const revoked = await eventsOfClient(suite.t, tenant.membershipId, 'TokenRevoked', app.id);
    expect(revoked).toHaveLength(1);
    expect(revoked[0].document).toMatchObject({ grant: 'client_credentials', client_id: app.id, reason: 'secret_rotated' });

    const config = await configurationOf(issuer, app.id, rotated.body.secret as string);
    const { access_token: after } = await client.clientCredentialsGrant(config);
    expect(await client.tokenIntrospection(resourceConfig, after)).toMatchObject({ active: true });
    const application = (await suite.t.http().get(`/memberships/${tenant.membershipId}/applications/${app.id}`).set('Authorization', tenant.admin.auth)).body;
    const deactivated = await suite.t
      .http()
      .put(`/memberships/${tenant.membershipId}/applications/${app.id}`)
      .set('Authorization', tenant.admin.auth)
      .send({ name: application.name, oidc: application.oidc, is_active: false });
    expect(deactivated.status).toBe(200);
    expect(await client.tokenIntrospection(resourceConfig, after)).toEqual({ active: false });
    const deleted = await suite.t.http().delete(`/memberships/${tenant.membershipId}/applications/${app.id}`).set('Authorization', tenant.admin.auth);
    expect(deleted.status).toBeLessThan(300);
    expect(await client.tokenIntrospection(resourceConfig, after)).toEqual({ active: false });
  });

  it("another client's token: revocation does nothing (200); a confidential client may introspect it, a public one may not", async () => {
    const { tenant, app, issuer } = await tenantWithClient();
    const other = await createApplication(suite.t, tenant.admin, { oidc: { redirect_uris: ['http://127.0.0.1:9/cb'], grant_types: ['client_credentials'] } } as Record<string, unknown>);
    const publicApp = await createApplication(suite.t, tenant.admin, { oidc: { redirect_uris: ['http://127.0.0.1:9/cb'], public: true } } as Record<string, unknown>);
    const { access_token: token } = await client.clientCredentialsGrant(await configurationOf(issuer, app.id, app.secret));

    const otherConfig = await configurationOf(issuer, other.id, other.secret);
    await client.tokenRevocation(otherConfig, token);
    expect(await client.tokenIntrospection(otherConfig, token)).toMatchObject({ active: true, client_id: app.id });
    expect(await client.tokenIntrospection(await configurationOf(issuer, publicApp.id), token)).toEqual({ active: false });
    expect(await eventsOfClient(suite.t, tenant.membershipId, 'TokenRevoked', app.id)).toHaveLength(0);
  });

  it("unknown, malformed and another membership's tokens introspect inactive; the other membership's client cannot revoke them", async () => {
    const { app, issuer } = await tenantWithClient();
    const { app: stranger, issuer: strangerIssuer } = await tenantWithClient();
    const config = await configurationOf(issuer, app.id, app.secret);
    const { access_token: token } = await client.clientCredentialsGrant(config);
    const strangerConfig = await configurationOf(strangerIssuer, stranger.id, stranger.secret);
    expect(await client.tokenIntrospection(strangerConfig, token)).toEqual({ active: false });
    await client.tokenRevocation(strangerConfig, token);
    expect(await client.tokenIntrospection(config, token)).toMatchObject({ active: true });
    for (const garbage of ['x', 'a.b.c', token.slice(0, -4) + 'AAAA']) {
      expect(await client.tokenIntrospection(config, garbage)).toEqual({ active: false });
    }
  });

  it('hostile input on introspect and revoke: a missing, repeated or over-long token, wrong types: 4xx OAuth errors, never 500', async () => {
    const { app } = await tenantWithClient();
    const path = (route: string) => `/oidc/${app.membershipId}/${route}`;
    for (const route of ['introspect', 'revoke']) {
      const cases: [string | Record<string, unknown>, number, string][] = [
        [{}, 400, 'invalid_request'],
        ['token=a&token=b', 400, 'invalid_request'],
        [{ token: 'a'.repeat(5000) }, 400, 'invalid_request'],
        ['token[a]=b', 400, 'invalid_request'],
        ['token=%00', 400, 'invalid_request'],
        ['token=x&token_type_hint=a&token_type_hint=b', 400, 'invalid_request'],
      ];
      for (const [body, status, error] of cases) {
        const res = await suite.t.http().post(path(route)).auth(app.id, app.secret).type('form').send(body);
        expect({ route, body, status: res.status, error: res.body.error }).toEqual({ route, body, status, error });
      }
      const json = await suite.t.http().post(path(route)).auth(app.id, app.secret).send({ token: 'x' });
      expect({ status: json.status, error: json.body.error }).toEqual({ status: 415, error: 'invalid_request' });
      const unknownHint = await suite.t.http().post(path(route)).auth(app.id, app.secret).type('form').send({ token: 'x', token_type_hint: 'id_token' });
      expect(unknownHint.status).toBe(200);
    }
    const longScope = await suite.t.http().post(path('token')).auth(app.id, app.secret).type('form').send({ grant_type: 'client_credentials', scope: 's'.repeat(5000) });
    expect({ status: longScope.status, error: longScope.body.error }).toEqual({ status: 400, error: 'invalid_request' });
    const repeatedScope = await suite.t.http().post(path('token')).auth(app.id, app.secret).type('form').send('grant_type=client_credentials&scope=a&scope=b');
    expect({ status: repeatedScope.status, error: repeatedScope.body.error }).toEqual({ status: 400, error: 'invalid_request' });
    for (const membership of ['%00', 'a'.repeat(300), '%ZZ', '..']) {
      for (const route of ['introspect', 'revoke', 'device/authorize', 'token']) {
        const res = await suite.t.http().post(`/oidc/${membership}/${route}`).auth(app.id, app.secret).type('form').send({ token: 'x', grant_type: 'client_credentials' });
        expect({ membership: membership.slice(0, 8), route, server: res.status >= 500, client: res.status >= 400 }).toEqual({ membership: membership.slice(0, 8), route, server: false, client: true });
      }
    }
    const headers = ['Basic !!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, `Basic ${Buffer.from(`${app.id}:`).toString('base64')}`, 'Bearer x', `Basic ${Buffer.from(`%ZZ:${app.secret}`).toString('base64')}`];
    for (const authorization of headers) {
      for (const route of ['introspect', 'revoke', 'device/authorize']) {
        const res = await suite.t.http().post(path(route)).set('Authorization', authorization).type('form').send({ token: 'x' });
        expect({ authorization, route, status: res.status, error: res.body.error }).toEqual({ authorization, route, status: 401, error: 'invalid_client' });
      }
    }
    const answer = await suite.t.http().post(path('introspect')).auth(app.id, app.secret).type('form').send({ token: 'x' });
    expect(answer.headers['cache-control']).toBe('no-store');
  });
});
