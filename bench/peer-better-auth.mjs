#!/usr/bin/env node
/**
 * A peer for `npm run bench:peers`: Better Auth (the npm package, a dev dependency) with e-mail
 * and password sign-in, its own PostgreSQL tables (created by its migrations through its
 * built-in Kysely adapter on a `pg` Pool, in the bench database), sessions in the database and
 * the cookie cache off, so that every getSession reads its session row as our /me reads ours.
 * Passwords are hashed with argon2id and the service's parameters (ARGON2_OPTIONS of
 * src/users/password-hasher.ts, repeated below because this script runs without a build),
 * through Better Auth's custom hash/verify hooks: sign-in then compares the servers, not the
 * hashes (its default is scrypt). Its rate limiter is off, as the service's is not in the way of
 * the bench either (one client, loopback).
 *
 * Environment: PEER_PORT, PEER_DATABASE_URL, PEER_SECRET, PEER_POOL_SIZE (10).
 * Prints "listening <port>" once it accepts requests.
 */
import { createServer } from 'node:http';
import argon2 from 'argon2';
import { betterAuth } from 'better-auth';
import { getMigrations } from 'better-auth/db';
import { toNodeHandler } from 'better-auth/node';
import pg from 'pg';
import { stopOnSignals } from './peer-process.mjs';

/** The service's argon2id parameters (src/users/password-hasher.ts): OWASP's minimum. */
const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 };

const port = Number(process.env.PEER_PORT ?? 0);
const baseURL = `http://127.0.0.1:${port}`;
const pool = new pg.Pool({ connectionString: process.env.PEER_DATABASE_URL, max: Number(process.env.PEER_POOL_SIZE ?? 10) });

const options = {
  baseURL,
  secret: process.env.PEER_SECRET,
  database: pool,
  emailAndPassword: {
    enabled: true,
    password: {
      hash: (password) => argon2.hash(password, ARGON2_OPTIONS),
      verify: async ({ hash, password }) => {
        try {
          return await argon2.verify(hash, password);
        } catch {
          return false;
        }
      },
    },
  },
  session: { cookieCache: { enabled: false } },
  rateLimit: { enabled: false },
  telemetry: { enabled: false },
};

const { runMigrations } = await getMigrations(options);
await runMigrations();
const auth = betterAuth(options);

const server = createServer(toNodeHandler(auth));
server.listen(port, '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));

stopOnSignals(server, () => pool.end());
