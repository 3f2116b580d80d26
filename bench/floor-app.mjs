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
 */
import 'reflect-metadata';
import { createSecretKey } from 'node:crypto';
import { Controller, Get, Module, Req, UnauthorizedException, UseGuards } from '@nestjs/common';
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

// Plain JavaScript: decorators applied as functions.
class FloorController {
  async me(request) {
    if (!pool) return { _id: request.claims.sub };
    const { rows } = await pool.query('select id, username, is_active from users where id = $1', [request.claims.sub]);
    if (!rows[0]?.is_active) throw new UnauthorizedException();
    return { _id: rows[0].id, username: rows[0].username };
  }
}
Controller('floor')(FloorController);
Req()(FloorController.prototype, 'me', 0);
Reflect.decorate([Get(), UseGuards(new JwtGuard())], FloorController.prototype, 'me', Object.getOwnPropertyDescriptor(FloorController.prototype, 'me'));

class FloorModule {}
Module({ controllers: [FloorController] })(FloorModule);

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
