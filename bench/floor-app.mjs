#!/usr/bin/env node
/**
 * The floor the service is measured against: a minimal Nest app on the same machine whose guard
 * verifies the same JWT (jsonwebtoken, which the service reaches through @nestjs/jwt: HS256, a KeyObject made once from the membership secret_key,
 * issuer and audience checked) and whose handler does ONE primary-key lookup of the user on the
 * same PostgreSQL server. Nothing else: no revocation check, no logging, no events.
 *
 * Environment: FLOOR_PORT, FLOOR_SECRET (membership secret_key), FLOOR_ISSUER, FLOOR_AUDIENCE,
 * FLOOR_DATABASE_URL (absent: no lookup, the JWT check alone), FLOOR_POOL_SIZE (default 10).
 * GET /floor with Authorization: Bearer <access token>.
 *
 * Two more floors, for the write and list scenarios (they need FLOOR_DATABASE_URL):
 *  - POST /floor/refresh {token}: the floor of refresh. It verifies the presented JWT as above,
 *    then runs ONE transaction with one insert into a revoked-tokens table and one insert into a
 *    sessions table (its own tables, `floor_revoked_tokens` and `floor_sessions`, created at
 *    start), and signs two HS256 JWTs (access and refresh) with the same key. No session lookup,
 *    no reuse detection, no events.
 *  - POST /floor/refresh-recorded {token}: the same, plus what the specification asks of every
 *    refresh beyond durable revocation: it records TokenRefreshed and TokenGenerated, each
 *    with the user's document. So it also reads the user by primary key (the service's `users`
 *    table), and its transaction inserts the two event rows into `floor_events`, a copy of the
 *    service's `events` table with the same columns, defaults and indexes (`like events
 *    including all`, made at start). No lookup of the token record, no reuse detection, no
 *    webhook probe, no secret filtering.
 *  - POST /floor/events (Authorization: Bearer): the floor of events `_query`. The guard above,
 *    then the same indexed select the service runs for `{"event_type": {"$in": [a, b]}}`, limit
 *    20 (one ordered index scan per type, UNION ALL, newest first), rows returned as JSON. No
 *    validation, no permission check, no query translation, no projection.
 */
import 'reflect-metadata';
import { createSecretKey, randomUUID } from 'node:crypto';
import { Body, Controller, Get, HttpCode, Module, Post, Req, UnauthorizedException, UseGuards } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import jwt from 'jsonwebtoken';
import pg from 'pg';

const key = createSecretKey(Buffer.from(process.env.FLOOR_SECRET ?? '', 'utf8'));
const expected = { algorithms: ['HS256'], issuer: process.env.FLOOR_ISSUER, audience: process.env.FLOOR_AUDIENCE };
const pool = process.env.FLOOR_DATABASE_URL
  ? new pg.Pool({ connectionString: process.env.FLOOR_DATABASE_URL, max: Number(process.env.FLOOR_POOL_SIZE ?? 10) })
  : undefined;

class JwtGuard {
  async canActivate(context) {
    const request = context.switchToHttp().getRequest();
    const match = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '');
    if (!match) throw new UnauthorizedException();
    try {
      request.claims = jwt.verify(match[1], key, expected);
    } catch {
      throw new UnauthorizedException();
    }
    return true;
  }
}

const signOptions = { algorithm: 'HS256', issuer: process.env.FLOOR_ISSUER, audience: process.env.FLOOR_AUDIENCE, expiresIn: 3600 };

/** The service's events `_query` for two types, as its list query builds it (see src/common/query/list-query.ts). */
const EVENTS_BY_TWO_TYPES = `(select id, membership_id, event_type, utilizer_id, document, prior, event_time from events
    where membership_id = $1 and event_type = $2 order by event_time desc, id desc limit 20)
  union all
  (select id, membership_id, event_type, utilizer_id, document, prior, event_time from events
    where membership_id = $1 and event_type = $3 order by event_time desc, id desc limit 20)
  order by event_time desc, id desc limit 20`;

/** The user's document of the recorded floor's events: what the service's events carry of a user. */
const USER_DOCUMENT = `select id as _id, membership_id, username, email_address, firstname, lastname, role, user_type, permissions,
    forbidden, is_active, source_provider, created_at, created_by from users where id = $1`;

/** The recorded floor's two events, each with the user's document. */
const INSERT_EVENTS = `insert into floor_events (id, membership_id, event_type, utilizer_id, document, event_time)
  values ($1, $2, 'TokenRefreshed', $3, $4, $5), ($6, $2, 'TokenGenerated', $3, $4, $5)`;

/**
 * Verifies the refresh JWT, then in one transaction inserts the used token into the revoked-tokens
 * table and the new session, and signs two JWTs. `recorded`: the user is read first, and the
 * transaction also inserts the two events.
 */
async function refreshPair(body, recorded) {
  let claims;
  try {
    claims = jwt.verify(String(body?.token ?? ''), key, expected);
  } catch {
    throw new UnauthorizedException();
  }
  const client = await pool.connect();
  const sessionId = randomUUID();
  const access = { sub: claims.sub, sid: sessionId, jti: randomUUID() };
  const refresh = { ...access, jti: randomUUID(), refresh_token: true };
  try {
    const user = recorded ? (await client.query(USER_DOCUMENT, [claims.sub])).rows[0] : undefined;
    if (recorded && !user) throw new UnauthorizedException();
    await client.query('begin');
    await client.query('insert into floor_revoked_tokens (jti, revoked_at) values ($1, now())', [randomUUID()]);
    await client.query('insert into floor_sessions (id, user_id, refresh_jti, created_at) values ($1, $2, $3, now())', [sessionId, claims.sub, refresh.jti]);
    if (user) {
      const now = new Date().toISOString();
      const document = JSON.stringify({ user, token_type: 'Bearer', expires_in: 3600, refresh_token_expires_in: 86400, created_at: now });
      await client.query(INSERT_EVENTS, [randomUUID(), user.membership_id, claims.sub, document, now, randomUUID()]);
    }
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
  return { access_token: jwt.sign(access, key, signOptions), refresh_token: jwt.sign(refresh, key, signOptions) };
}

// Plain JavaScript: decorators applied as functions.
class FloorController {
  async me(request) {
    if (!pool) return { _id: request.claims.sub };
    const { rows } = await pool.query('select id, username, is_active from users where id = $1', [request.claims.sub]);
    if (!rows[0]?.is_active) throw new UnauthorizedException();
    return { _id: rows[0].id, username: rows[0].username };
  }

  async refresh(body) {
    return refreshPair(body, false);
  }

  async refreshRecorded(body) {
    return refreshPair(body, true);
  }

  async events(request, body) {
    const types = body?.where?.event_type?.$in ?? [];
    const { rows } = await pool.query(EVENTS_BY_TWO_TYPES, [request.claims.prn, types[0], types[1]]);
    return {
      items: rows.map((row) => ({
        _id: row.id,
        membership_id: row.membership_id,
        event_type: row.event_type,
        utilizer_id: row.utilizer_id,
        document: row.document,
        prior: row.prior,
        event_time: row.event_time.toISOString(),
      })),
    };
  }
}
Controller('floor')(FloorController);
Req()(FloorController.prototype, 'me', 0);
Reflect.decorate([Get(), UseGuards(new JwtGuard())], FloorController.prototype, 'me', Object.getOwnPropertyDescriptor(FloorController.prototype, 'me'));
Body()(FloorController.prototype, 'refresh', 0);
Reflect.decorate([Post('refresh'), HttpCode(201)], FloorController.prototype, 'refresh', Object.getOwnPropertyDescriptor(FloorController.prototype, 'refresh'));
Body()(FloorController.prototype, 'refreshRecorded', 0);
Reflect.decorate([Post('refresh-recorded'), HttpCode(201)], FloorController.prototype, 'refreshRecorded', Object.getOwnPropertyDescriptor(FloorController.prototype, 'refreshRecorded'));
Req()(FloorController.prototype, 'events', 0);
Body()(FloorController.prototype, 'events', 1);
Reflect.decorate([Post('events'), HttpCode(200), UseGuards(new JwtGuard())], FloorController.prototype, 'events', Object.getOwnPropertyDescriptor(FloorController.prototype, 'events'));

class FloorModule {}
Module({ controllers: [FloorController] })(FloorModule);

if (pool) {
  await pool.query('create table if not exists floor_revoked_tokens (jti text primary key, revoked_at timestamptz not null)');
  await pool.query('create table if not exists floor_sessions (id text primary key, user_id text not null, refresh_jti text not null, created_at timestamptz not null)');
  await pool.query('create table if not exists floor_events (like events including all)');
}
const app = await NestFactory.create(FloorModule, { logger: false });
await app.listen(Number(process.env.FLOOR_PORT ?? 3999), '127.0.0.1');
const close = async () => {
  await app.close();
  await pool?.end();
  process.exit(0);
};
process.on('SIGTERM', close);
process.on('SIGINT', close);
process.stdout.write('floor listening\n');
