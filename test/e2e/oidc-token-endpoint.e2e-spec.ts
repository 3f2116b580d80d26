import { createApplication, createMembership, useInstallation } from '../support/api';

/*
 * The issuer's token endpoint before any grant (contract "Single sign-on"): form bodies, client
 * authentication and OAuth's error objects (RFC 6749 5.2), never the service's error body.
 */
describe('OpenID Provider token endpoint: the envelope', () => {
  const suite = useInstallation({ publicUrl: true });

  async function clientOf(options: { public?: boolean; grant_types?: string[] } = {}) {
    const tenant = await createMembership(suite.t, suite.admin);
    const app = await createApplication(suite.t, tenant.admin, {
      oidc: { redirect_uris: ['http://127.0.0.1:9/callback'], ...options },
    } as Record<string, unknown>);
    return { tenant, app, tokenPath: `/oidc/${tenant.membershipId}/token` };
  }

  it('an unknown grant type is unsupported_grant_type; a JSON body is invalid_request (415); both in OAuth shape, no-store', async () => {
    const { app, tokenPath } = await clientOf();
    const unknown = await suite.t.http().post(tokenPath).auth(app.id, app.secret).type('form').send({ grant_type: 'password', username: 'a', password: 'b' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
    expect(unknown.headers['cache-control']).toBe('no-store');
    const json = await suite.t.http().post(tokenPath).auth(app.id, app.secret).send({ grant_type: 'client_credentials' });
    expect(json.status).toBe(415);
    expect(json.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });

  it('a repeated parameter, or a NUL in one, is invalid_request', async () => {
    const { app, tokenPath } = await clientOf();
    const repeated = await suite.t.http().post(tokenPath).auth(app.id, app.secret).type('form').send('grant_type=client_credentials&grant_type=refresh_token');
    expect(repeated.status).toBe(400);
    expect(repeated.body.error).toBe('invalid_request');
    // The client's own parameters too: a repeated client_id or client_secret is a malformed request, not a failed authentication.
    const id = encodeURIComponent(app.id);
    for (const form of [`client_id=${id}&client_id=${id}`, `client_id=${id}&client_secret=${encodeURIComponent(app.secret)}&client_secret=x`]) {
      const res = await suite.t.http().post(tokenPath).type('form').send(`grant_type=client_credentials&${form}`);
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'invalid_request' });
    }
    const nul = await suite.t.http().post(tokenPath).auth(app.id, app.secret).type('form').send('grant_type=client%00credentials');
    expect(nul.status).toBe(400);
    expect(nul.body.error).toBe('invalid_request');
  });

  it('client authentication: a wrong secret, an unknown client, two methods at once, a secretless confidential client: 401 invalid_client with a Basic challenge', async () => {
    const { app, tokenPath } = await clientOf({ grant_types: ['authorization_code', 'refresh_token', 'client_credentials'] });
    const attempts = [
      suite.t.http().post(tokenPath).auth(app.id, 'wrong').type('form').send({ grant_type: 'client_credentials' }),
      suite.t.http().post(tokenPath).auth('00000000-0000-4000-8000-000000000000', app.secret).type('form').send({ grant_type: 'client_credentials' }),
      suite.t.http().post(tokenPath).auth(app.id, app.secret).type('form').send({ grant_type: 'client_credentials', client_secret: app.secret }),
      suite.t.http().post(tokenPath).type('form').send({ grant_type: 'client_credentials', client_id: app.id }),
      suite.t.http().post(tokenPath).type('form').send({ grant_type: 'client_credentials', client_id: app.id, client_secret: 'wrong' }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
      expect(res.headers['www-authenticate']).toMatch(/^Basic /);
    }
  });

  it("an application of another membership is no client of this issuer", async () => {
    const { app } = await clientOf({ grant_types: ['client_credentials'] });
    const other = await createMembership(suite.t, suite.admin);
    const res = await suite.t.http().post(`/oidc/${other.membershipId}/token`).auth(app.id, app.secret).type('form').send({ grant_type: 'client_credentials' });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
  });
});
