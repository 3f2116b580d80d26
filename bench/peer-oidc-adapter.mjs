/**
 * oidc-provider's storage adapter for the bench peers (bench/peer-oidc.mjs, bench/peer-oidc-sso.mjs):
 * every model in one PostgreSQL table, `oidc_payloads`, of PEER_DATABASE_URL (pool PEER_POOL_SIZE, 10).
 */
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.PEER_DATABASE_URL, max: Number(process.env.PEER_POOL_SIZE ?? 10) });
await pool.query(`create table if not exists oidc_payloads (
  id text not null, model text not null, payload jsonb not null, grant_id text, user_code text, uid text,
  expires_at timestamptz, consumed_at timestamptz, primary key (model, id))`);

/** oidc-provider's adapter interface on one PostgreSQL table (every lookup by primary key but the grant's). */
export class PostgresAdapter {
  /** Ends the pool (at the peer's stop). */
  static end() {
    return pool.end();
  }

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
