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
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.PEER_DATABASE_URL, max: Number(process.env.PEER_POOL_SIZE ?? 10) });
await pool.query(`create table if not exists oidc_payloads (
  id text not null, model text not null, payload jsonb not null, grant_id text, user_code text, uid text,
  expires_at timestamptz, consumed_at timestamptz, primary key (model, id))`);

/** oidc-provider's adapter interface on one PostgreSQL table (every lookup by primary key but the grant's). */
class PostgresAdapter {
  constructor(model) {
    this.model = model;
  }

  async upsert(id, payload, expiresIn) {
    await pool.query(
      `insert into oidc_payloads (id, model, payload, grant_id, user_code, uid, expires_at)
       values ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))
       on conflict (model, id) do update set payload = excluded.payload, expires_at = excluded.expires_at`,
      [id, this.model, payload, payload.grantId ?? null, payload.userCode ?? null, payload.uid ?? null, expiresIn ?? 3600],
    );
  }

  async find(id) {
    const { rows } = await pool.query(
      'select payload, consumed_at from oidc_payloads where model = $1 and id = $2 and (expires_at is null or expires_at > now())',
      [this.model, id],
    );
    if (!rows[0]) return undefined;
    return { ...rows[0].payload, ...(rows[0].consumed_at ? { consumed: true } : {}) };
  }

  async findByUserCode(userCode) {
    const { rows } = await pool.query('select payload from oidc_payloads where model = $1 and user_code = $2', [this.model, userCode]);
    return rows[0]?.payload;
  }

  async findByUid(uid) {
    const { rows } = await pool.query('select payload from oidc_payloads where model = $1 and uid = $2', [this.model, uid]);
    return rows[0]?.payload;
  }

  async consume(id) {
    await pool.query('update oidc_payloads set consumed_at = now() where model = $1 and id = $2', [this.model, id]);
  }

  async destroy(id) {
    await pool.query('delete from oidc_payloads where model = $1 and id = $2', [this.model, id]);
  }

  async revokeByGrantId(grantId) {
    await pool.query('delete from oidc_payloads where grant_id = $1', [grantId]);
  }
}

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

const close = () =>
  server.close(async () => {
    await pool.end();
    process.exit(0);
  });
process.on('SIGTERM', close);
process.on('SIGINT', close);
