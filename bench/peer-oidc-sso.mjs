#!/usr/bin/env node
/**
 * A peer for `npm run bench:oidc`: node oidc-provider (the npm package, a dev dependency) as an
 * OpenID Provider for one confidential client with the authorization code grant (PKCE S256), its
 * models stored in PostgreSQL by bench/peer-oidc.mjs's adapter (one table, `oidc_payloads`).
 * Its interaction signs `bench-user` in and grants `openid profile email` at once (no page): the
 * bench measures the token endpoint's code exchange and userinfo, not the pages.
 *
 * Environment: PEER_PORT, PEER_DATABASE_URL, PEER_CLIENT_ID, PEER_CLIENT_SECRET, PEER_REDIRECT_URI,
 * PEER_POOL_SIZE (10). Prints "listening <port>" once it accepts requests.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { PostgresAdapter } from './peer-oidc-adapter.mjs';
import { stopOnSignals } from './peer-process.mjs';

const ACCOUNT = 'bench-user';
const SCOPE = 'openid profile email';

// ES256, as the service signs: the two sign the same ID tokens.
const signingKey = { ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), alg: 'ES256', use: 'sig', kid: 'bench' };

const server = createServer();
server.listen(Number(process.env.PEER_PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address();
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    adapter: PostgresAdapter,
    clients: [
      {
        client_id: process.env.PEER_CLIENT_ID,
        client_secret: process.env.PEER_CLIENT_SECRET,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: [process.env.PEER_REDIRECT_URI],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'ES256',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'] },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, email: `${id}@example.com`, email_verified: true, name: 'Bench User', preferred_username: id }),
    }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    jwks: { keys: [signingKey] },
    cookies: { keys: ['bench-peer-cookie-key'] },
    features: { devInteractions: { enabled: false } },
    pkce: { required: () => true },
  });

  /** The interaction: `bench-user` signs in and consents, with no page. */
  async function finishInteraction(req, res) {
    const details = await provider.interactionDetails(req, res);
    const grant = new provider.Grant({ accountId: ACCOUNT, clientId: details.params.client_id });
    grant.addOIDCScope(SCOPE);
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url.startsWith('/interaction/')) {
      finishInteraction(req, res).catch((error) => {
        res.statusCode = 500;
        res.end(String(error));
      });
      return;
    }
    callback(req, res);
  });
  process.stdout.write(`listening ${port}\n`);
});

stopOnSignals(server, () => PostgresAdapter.end());
