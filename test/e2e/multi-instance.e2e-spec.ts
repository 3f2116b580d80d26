import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { Client } from 'pg';
import request from 'supertest';
import { PortcullisClient, portcullis } from '@portcullis/client';
import { ExpirySweeper } from '../../src/common/expiry-sweeper';
import { MembershipCache } from '../../src/memberships/membership-cache';
import { ROLE_CACHE_TTL_MS } from '../../src/roles/role-cache';
import type { TestApp } from '../support/app';
import { createApplicationWithPermissions, createMembership, eventually, type Installation, signIn, unique } from '../support/api';
import { describeWithServer, useTwoInstances } from '../support/instances';

/*
 * Two instances of the service on ONE PostgreSQL database, as behind a load balancer: what one
 * instance changes, the other must honour (specification "Limits", cache behaviour). Needs a
 * server database: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres.
 */
describeWithServer('two instances on one database', () => {
  // The periodic sweep would race the explicit sweeps below.
  const instances = useTwoInstances({ SWEEP_INTERVAL_MS: '86400000' });
  let a: TestApp;
  let b: TestApp;
  let install: Installation;
  let membershipId: string;
  const password = 'correct horse battery';

  beforeAll(() => {
    ({ a, b, install } = instances);
    membershipId = install.admin.membershipId;
  });

  async function createUser(options: { role?: string } = {}): Promise<{ id: string; username: string }> {
    const username = unique('user');
    const res = await a
      .http()
      .post(`/memberships/${membershipId}/users`)
      .set('Authorization', install.admin.auth)
      .send({ username, email_address: `${username}@example.com`, password, ...options });
    if (res.status !== 201) throw new Error(`user create failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: res.body._id as string, username };
  }

  describe('changes that take effect on the other instance at once', () => {
    it('a token revoked through A is rejected by B on the very next request', async () => {
      const user = await createUser();
      const session = await signIn(a, membershipId, user.username, password);
      await b.http().get('/me').set('Authorization', session.auth).expect(200);

      await a.http().post('/revoke-token').send({ token: session.accessToken }).expect(204);

      const me = await b.http().get('/me').set('Authorization', session.auth);
      expect(me.status).toBe(401);
      expect(me.body.errorCode).toBe('TokenWasRevoked');
      const refresh = await b.http().post('/refresh-token').send({ token: session.refreshToken });
      expect(refresh.status).toBe(401);
      expect(refresh.body.errorCode).toBe('RefreshTokenWasRevoked');
    });

    it('a sign-in lock set through A refuses on B at once; parallel guesses on both count as one (max_failures 10); an unlock through B frees it on A', async () => {
      const user = await createUser();
      const guess = (app: TestApp, guessed: string) =>
        app.http().post('/generate-token').set('X-Service-Alias', membershipId).send({ username: user.username, password: guessed });
      // 16 wrong passwords at once, half on each instance: the count is one row, so exactly 10 reach the password check.
      const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => guess(i % 2 ? b : a, 'a wrong guess')));
      expect(answers.filter((res) => res.status === 401)).toHaveLength(10);
      expect(answers.filter((res) => res.status === 429)).toHaveLength(6);
      for (const app of [a, b]) {
        const locked = await guess(app, password);
        expect(locked.status).toBe(429);
        expect(locked.body.errorCode).toBe('TooManySignInAttempts');
        expect(Number(locked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      }
      await b.http().post(`/memberships/${membershipId}/users/${user.id}/unlock`).set('Authorization', install.admin.auth).expect(204);
      expect((await guess(a, password)).status).toBe(201);
    });

    it('a user frozen through A can no longer use its tokens or sign in on B', async () => {
      const user = await createUser();
      const session = await signIn(b, membershipId, user.username, password);
      await b.http().get('/me').set('Authorization', session.auth).expect(200);

      await a.http().post(`/memberships/${membershipId}/users/${user.id}/freeze`).set('Authorization', install.admin.auth).expect(200);

      const me = await b.http().get('/me').set('Authorization', session.auth);
      expect(me.status).toBe(401);
      expect(['TokenWasRevoked', 'UserInactive']).toContain(me.body.errorCode);
      const verify = await b.http().get('/verify-token').set('Authorization', session.auth);
      expect(verify.status).toBe(401);
      const again = await b.http().post('/generate-token').set('X-Service-Alias', membershipId).send({ username: user.username, password });
      expect(again.status).toBe(401);
      expect(again.body.errorCode).toBe('UserInactive');
    });

    it('an application secret rotated through A stops working on B at once; the new one works there', async () => {
      const created = await a
        .http()
        .post(`/memberships/${membershipId}/applications`)
        .set('Authorization', install.admin.auth)
        .send({ name: unique('app') });
      expect(created.status).toBe(201);
      const id = created.body._id as string;
      const oldBasic = `Basic ${id}:${created.body.secret as string}`;
      await b.http().get('/me').set('Authorization', oldBasic).expect(200);

      const rotated = await a.http().post(`/memberships/${membershipId}/applications/${id}/secret`).set('Authorization', install.admin.auth);
      expect(rotated.status).toBe(200);
      const newBasic = `Basic ${id}:${rotated.body.secret as string}`;

      const old = await b.http().get('/me').set('Authorization', oldBasic);
      expect(old.status).toBe(401);
      expect(old.body.errorCode).toBe('InvalidToken');
      const me = await b.http().get('/me').set('Authorization', newBasic).expect(200);
      expect(me.body._id).toBe(id);
      expect(me.body).not.toHaveProperty('secret');
    });
  });

  describe('role changes', () => {
    afterEach(() => jest.restoreAllMocks());

    it('are visible on A at once and on B no later than the role cache lifetime', async () => {
      const role = await a
        .http()
        .post(`/memberships/${membershipId}/roles`)
        .set('Authorization', install.admin.auth)
        .send({ name: unique('Reader'), permissions: ['users.read'] });
      expect(role.status).toBe(201);
      const user = await createUser({ role: role.body.slug });
      const session = await signIn(b, membershipId, user.username, password);
      const check = (app: TestApp) =>
        app.http().get('/roles/check-permission').query({ permission: 'users.read' }).set('Authorization', session.auth).expect(200);

      // B reads the role now, so it holds it in its cache.
      expect((await check(b)).body.allowed).toBe(true);
      expect((await check(a)).body.allowed).toBe(true);

      const update = await a
        .http()
        .put(`/memberships/${membershipId}/roles/${role.body._id}`)
        .set('Authorization', install.admin.auth)
        .send({ name: role.body.name, permissions: ['roles.read'] });
      expect(update.status).toBe(200);

      expect((await check(a)).body).toMatchObject({ allowed: false, reason: 'no_permission' });
      // B may still answer from its cached copy (allowed by the specification) ...
      await check(b);
      // ... but not once the copy has expired. The clock moves; the caches read Date.now().
      const realNow = Date.now.bind(Date);
      jest.spyOn(Date, 'now').mockImplementation(() => realNow() + ROLE_CACHE_TTL_MS + 1_000);
      expect((await check(b)).body).toMatchObject({ allowed: false, reason: 'no_permission' });
      expect(ROLE_CACHE_TTL_MS).toBeLessThanOrEqual(5 * 60 * 1000);
    });
  });

  describe("changes of a membership's roles, user types and settings reach the other instance's caches within about a second", () => {
    /** Generous against a loaded machine, and still far below the caches' lifetimes (5 minutes, 1 hour), which it would otherwise take. */
    const WITHIN_MS = 10_000;

    async function readerOn(app: TestApp, permissions: string[]): Promise<{ role: { _id: string; slug: string; name: string }; auth: string }> {
      const role = await app.http().post(`/memberships/${membershipId}/roles`).set('Authorization', install.admin.auth).send({ name: unique('Reader'), permissions });
      expect(role.status).toBe(201);
      const user = await createUser({ role: role.body.slug });
      return { role: role.body, auth: (await signIn(app, membershipId, user.username, password)).auth };
    }
    const changeRoleOn = (app: TestApp, role: { _id: string; name: string }, permissions: string[]) =>
      app.http().put(`/memberships/${membershipId}/roles/${role._id}`).set('Authorization', install.admin.auth).send({ name: role.name, permissions }).expect(200);

    it("a role changed through B: A's check-permission follows (A had the role cached)", async () => {
      const reader = await readerOn(a, ['users.read', 'events.read']);
      const check = (app: TestApp) =>
        app.http().get('/roles/check-permission').query({ permission: 'events.read' }).set('Authorization', reader.auth).expect(200);
      expect((await check(a)).body.allowed).toBe(true);

      await changeRoleOn(b, reader.role, ['users.read']);
      expect((await check(b)).body.allowed).toBe(false);
      await eventually(async () => ((await check(a)).body.allowed === false ? true : undefined), "A's check-permission to follow B's role change", WITHIN_MS);
      // The stream route is judged by the same role on A now.
      const stream = await a.http().get(`/memberships/${membershipId}/events/stream`).set('Authorization', reader.auth);
      expect(stream.status).toBe(403);
    });

    it('a user type changed through B: A validates users against the new type', async () => {
      const slug = unique('kind').toLowerCase();
      const type = await a
        .http()
        .post(`/memberships/${membershipId}/user-types`)
        .set('Authorization', install.admin.auth)
        .send({ name: slug, slug, properties: { plan: { type: 'string' } } });
      expect(type.status).toBe(201);
      const createOn = (app: TestApp) => {
        const username = unique('typed');
        return app
          .http()
          .post(`/memberships/${membershipId}/users`)
          .set('Authorization', install.admin.auth)
          .send({ username, email_address: `${username}@example.com`, password, user_type: slug });
      };
      // A reads the type now, so it holds it in its cache.
      expect((await createOn(a)).status).toBe(201);
      const put = await b
        .http()
        .put(`/memberships/${membershipId}/user-types/${type.body._id}`)
        .set('Authorization', install.admin.auth)
        .send({ name: slug, slug, properties: { plan: { type: 'string', required: true } } });
      expect(put.status).toBe(200);
      await eventually(async () => ((await createOn(a)).status === 400 ? true : undefined), "A to validate against B's user type", WITHIN_MS);
    });

    it("a membership renamed through B: A's cached membership follows", async () => {
      const tenant = await createMembership(a, install.admin);
      const cached = a.app.get(MembershipCache);
      expect((await cached.get(tenant.membershipId))?.name).toBe(tenant.membership.name);
      const renamed = unique('Renamed');
      await b.http().put(`/memberships/${tenant.membershipId}`).set('Authorization', install.admin.auth).send({ name: renamed }).expect(200);
      await eventually(async () => ((await cached.get(tenant.membershipId))?.name === renamed ? true : undefined), "A's cached membership to follow B's rename", WITHIN_MS);
    });

    it("with the LISTEN connections gone silent (their backends stopped, the sockets open): each instance sees its heartbeat unanswered, listens again and follows the other's changes", async () => {
      const tenant = await createMembership(a, install.admin);
      const cached = a.app.get(MembershipCache);
      await cached.get(tenant.membershipId);
      const admin = new Client({ connectionString: a.databaseUrl });
      await admin.connect();
      const listeners = async (): Promise<number[]> =>
        (
          await admin.query<{ pid: number }>("select pid from pg_stat_activity where datname = current_database() and application_name = 'portcullis-listen'")
        ).rows.map((row) => row.pid);
      const silenced: number[] = [];
      try {
        // Two per instance: the event wake-ups' and the webhook deliveries'.
        const open = await listeners();
        expect(open).toHaveLength(4);
        // SIGSTOP: the backend neither answers nor closes, as a peer behind a dropped flow would not.
        for (const pid of open) {
          process.kill(pid, 'SIGSTOP');
          silenced.push(pid);
        }
        // The heartbeat asks every 10 s and waits 5 s: well within 30 s, each connection is replaced.
        await eventually(
          async () => {
            const fresh = (await listeners()).filter((pid) => !silenced.includes(pid));
            return fresh.length === silenced.length ? true : undefined;
          },
          'both instances to open new LISTEN connections',
          30_000,
        );
      } finally {
        for (const pid of silenced) process.kill(pid, 'SIGCONT');
        await admin.end();
      }
      const renamed = unique('Heard again');
      await b.http().put(`/memberships/${tenant.membershipId}`).set('Authorization', install.admin.auth).send({ name: renamed }).expect(200);
      await eventually(async () => ((await cached.get(tenant.membershipId))?.name === renamed ? true : undefined), "A's cached membership to follow B's rename", WITHIN_MS);
    }, 60_000);

    it('a membership deleted through B: A forgets its cached row (no event is recorded for a deletion), so A answers 404 as B does', async () => {
      const tenant = await createMembership(a, install.admin);
      const discovery = `/oidc/${tenant.membershipId}/.well-known/openid-configuration`;
      // A reads the membership now, so it holds it in its cache.
      await a.http().get(discovery).expect(200);
      // A membership holding users cannot be deleted: its only user, the tenant's admin, goes first.
      await b.http().delete(`/memberships/${tenant.membershipId}/users/${tenant.admin.userId}`).set('Authorization', tenant.admin.auth).expect(204);
      await b.http().delete(`/memberships/${tenant.membershipId}`).set('Authorization', install.admin.auth).expect(204);
      await b.http().get(discovery).expect(404);
      await eventually(async () => ((await a.http().get(discovery)).status === 404 ? true : undefined), "A to forget the membership B deleted", WITHIN_MS);
      const code = await a.http().post(`/memberships/${tenant.membershipId}/codes`).send({ client_info: { name: 'TV' } });
      expect([code.status, code.body.errorCode]).toEqual([404, 'MembershipNotFound']);
    });

    describe('through the client library (BaseUrl A, CacheTTL 60)', () => {
      let client: PortcullisClient;
      let server: Server | undefined;
      let apiUrl: string;

      beforeAll(async () => {
        const streamApp = await createApplicationWithPermissions(a, install.admin, ['events.read']);
        client = new PortcullisClient({ BaseUrl: a.url, MembershipId: membershipId, CacheTTL: 60, StreamCredentials: `${streamApp.id}:${streamApp.secret}` });
        const app = express();
        app.get('/orders', portcullis(client).authorized({ resource: 'orders', action: 'read' }), (_req, res) => {
          res.json({ ok: true });
        });
        const listening = app.listen(0, '127.0.0.1');
        server = listening;
        await new Promise<void>((resolve) => listening.once('listening', () => resolve()));
        apiUrl = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
      });
      afterAll(async () => {
        client?.close();
        await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      });

      it("a role losing the permission through B: the protected API answers 403 (the client asks A again, and A no longer answers from its old copy)", async () => {
        const reader = await readerOn(a, ['orders.read']);
        const orders = () => request(apiUrl).get('/orders').set('Authorization', reader.auth);
        await orders().expect(200);
        await eventually(async () => (client.streamConnected ? true : undefined), 'the event stream to connect');
        await orders().expect(200);

        await changeRoleOn(b, reader.role, []);
        await eventually(async () => ((await orders()).status === 403 ? true : undefined), 'the protected API to refuse', WITHIN_MS);
        // Not a passing refusal: the answer the client keeps now is A's new one.
        for (let i = 0; i < 5; i++) await orders().expect(403);
      });
    });
  });

  describe('the expiry sweeper', () => {
    async function withDatabase<T>(work: (client: Client) => Promise<T>): Promise<T> {
      const client = new Client({ connectionString: a.databaseUrl });
      await client.connect();
      try {
        return await work(client);
      } finally {
        await client.end();
      }
    }

    // Token records of one sign-in session, which ends with the last of them.
    const insertSessions = (client: Client, prefix: string, count: number, expiresAt: string) =>
      client.query(
        `with family as (
           insert into sessions (id, membership_id, user_id) values ($1 || 'session', $2, $3) returning id
         )
         insert into token_sessions (id, session_id, membership_id, user_id, kind, access_jti, access_expires_at, expires_at)
         select $1 || g, family.id, $2, $3, 'pair', $1 || 'jti-' || g, ${expiresAt}, ${expiresAt}
         from generate_series(1, $4) as g, family`,
        [prefix, membershipId, install.admin.userId, count],
      );

    const countWithPrefix = async (client: Client, prefix: string, table = 'token_sessions') =>
      Number((await client.query<{ n: string }>(`select count(*) as n from ${table} where id like $1 || '%'`, [prefix])).rows[0].n);

    it('runs on one instance at a time: concurrent sweeps on A and B delete every expired row exactly once', async () => {
      const rounds = 3;
      const expired = 2_500; // several batches of 1000, so the two instances contend between batches
      for (let round = 0; round < rounds; round++) {
        const stale = unique(`stale${round}`);
        const live = unique(`live${round}`);
        await withDatabase(async (client) => {
          await insertSessions(client, stale, expired, `now() - interval '1 hour'`);
          await insertSessions(client, live, 10, `now() + interval '1 hour'`);
        });

        const [onA, onB] = await Promise.all([a.app.get(ExpirySweeper).sweep(), b.app.get(ExpirySweeper).sweep()]);

        expect(onA.ran || onB.ran).toBe(true);
        expect(onA.deleted + onB.deleted).toBe(expired);
        await withDatabase(async (client) => {
          expect(await countWithPrefix(client, stale)).toBe(0);
          expect(await countWithPrefix(client, live)).toBe(10);
          // The session of the swept records went with them; the live one stays.
          expect(await countWithPrefix(client, stale, 'sessions')).toBe(0);
          expect(await countWithPrefix(client, live, 'sessions')).toBe(1);
        });
      }
    });

    it('keeps records inside the grace period after their expiry', async () => {
      const recent = unique('recent');
      await withDatabase((client) => insertSessions(client, recent, 5, `now() - interval '10 seconds'`));
      const results = await Promise.all([a.app.get(ExpirySweeper).sweep(), b.app.get(ExpirySweeper).sweep()]);
      expect(results.reduce((sum, result) => sum + result.deleted, 0)).toBe(0);
      await withDatabase(async (client) => expect(await countWithPrefix(client, recent)).toBe(5));
    });
  });
});
