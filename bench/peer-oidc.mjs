#!/usr/bin/env node
/**
 * A peer for `npm run bench:peers`: node oidc-provider (the npm package, a dev dependency) with
 * one client-credentials client, opaque access tokens, and its models stored in PostgreSQL by the
 * small adapter below (one table, `oidc_payloads`, in the bench database). The bench compares
 * its token introspection (RFC 7662: "is this token live, and whose is it") with the service's
 * POST /verify-token.
 *
 * Environment: PEER_PORT, PEER_DATABASE_URL, PEER_CLIENT_ID, PEER_CLIENT_SECRET, PEER_POOL_SIZE (10).
 * Prints "listening <port>" once it accepts requests.
 */
import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { PostgresAdapter } from './peer-oidc-adapter.mjs';
import { stopOnSignals } from './peer-process.mjs';

const server = createServer();
server.listen(Number(process.env.PEER_PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address();
  const provider = new Provider(`http://127.0.0.1:${port}`, {
    adapter: PostgresAdapter,
    clients: [
      {
        client_id: process.env.PEER_CLIENT_ID,
        client_secret: process.env.PEER_CLIENT_SECRET,
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    cookies: { keys: ['bench-peer-cookie-key'] },
    features: { clientCredentials: { enabled: true }, introspection: { enabled: true }, devInteractions: { enabled: false } },
    ttl: { ClientCredentials: 3600 },
  });
  server.on('request', provider.callback());
  process.stdout.write(`listening ${port}\n`);
});

stopOnSignals(server, () => PostgresAdapter.end());
