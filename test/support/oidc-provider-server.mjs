// A real OpenID Connect provider (npm oidc-provider) on 127.0.0.1, run as a child process of a
// test because oidc-provider ships ES modules only. Configuration arrives as JSON in
// OIDC_TEST_CONFIG: {port, keys: [private JWKs], clients: [...], accounts: {id: claims}, clientAuthMethods?}; without
// keys, one RS256 key is made for this run.
// It prints "listening <port>" once it accepts requests.
import { createServer } from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

const config = JSON.parse(process.env.OIDC_TEST_CONFIG ?? '{}');
if (!config.keys?.length) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  config.keys = [{ ...(await exportJWK(privateKey)), kid: 'local-1', alg: 'RS256', use: 'sig' }];
}
const server = createServer();
server.listen(config.port ?? 0, '127.0.0.1', () => {
  const { port } = server.address();
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    clients: config.clients,
    jwks: { keys: config.keys },
    cookies: { keys: ['oidc-test-cookie-key'] },
    // Token endpoint client authentication offered in discovery (oidc-provider's default when unset).
    ...(config.clientAuthMethods ? { clientAuthMethods: config.clientAuthMethods } : {}),
    // Profile and e-mail claims in the id token itself, not only at userinfo.
    conformIdTokenClaims: false,
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['given_name', 'family_name'] },
    features: { devInteractions: { enabled: true } },
    findAccount: (_ctx, id) => (config.accounts?.[id] ? { accountId: id, claims: () => ({ sub: id, ...config.accounts[id] }) } : undefined),
  });
  server.on('request', provider.callback());
  process.stdout.write(`listening ${port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
