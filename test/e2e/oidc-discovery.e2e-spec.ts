import * as client from 'openid-client';
import { createMembership, useInstallation } from '../support/api';

/*
 * Each membership's issuer as OpenID Connect Discovery 1.0 publishes it (contract "Single sign-on"):
 * read by openid-client, the certified relying party, exactly as an application would.
 */
describe('OpenID Provider discovery', () => {
  const suite = useInstallation({ publicUrl: true });

  it("openid-client discovers a membership's issuer: PUBLIC_URL based, S256 only, the contract's lists", async () => {
    const tenant = await createMembership(suite.t, suite.admin);
    const issuer = `${suite.t.url}/oidc/${tenant.membershipId}`;
    const configuration = await client.discovery(new URL(issuer), 'any-client', undefined, undefined, { execute: [client.allowInsecureRequests] });
    const metadata = configuration.serverMetadata();
    expect(metadata.issuer).toBe(issuer);
    expect(metadata).toMatchObject({
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/userinfo`,
      jwks_uri: `${issuer}/jwks`,
      end_session_endpoint: `${issuer}/logout`,
      introspection_endpoint: `${issuer}/introspect`,
      revocation_endpoint: `${issuer}/revoke`,
      device_authorization_endpoint: `${issuer}/device/authorize`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(metadata.grant_types_supported).toEqual(
      expect.arrayContaining(['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code']),
    );
    expect(metadata.claims_supported).toEqual(expect.arrayContaining(['sub', 'email', 'email_verified', 'preferred_username', 'amr', 'sid']));
  });

  it('the issuer never comes from the Host header', async () => {
    const tenant = await createMembership(suite.t, suite.admin);
    const res = await suite.t.http().get(`/oidc/${tenant.membershipId}/.well-known/openid-configuration`).set('Host', 'evil.example').set('X-Forwarded-Host', 'evil.example');
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).not.toContain('evil.example');
    expect(res.body.issuer).toBe(`${suite.t.url}/oidc/${tenant.membershipId}`);
  });

  it('an unknown membership has no issuer: 404', async () => {
    const res = await suite.t.http().get('/oidc/00000000-0000-4000-8000-000000000000/.well-known/openid-configuration');
    expect(res.status).toBe(404);
  });
});
