import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Client } from 'pg';
import request from 'supertest';
import { loadConfig } from '../../src/config/config';
import { AUTOVACUUM_DOCS } from '../../src/database/database';
import { startListening } from '../../src/server';
import { TEST_SETUP_TOKEN, type TestApp } from '../support/app';
import { createServerDatabase, serverUrl } from '../support/database';
import { type Installation, setupInstallation } from '../support/api';
import { captureLog, type CapturedLog } from '../support/log-capture';
import { scrapeMetrics } from '../support/operations';

const VERSION = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

interface LoggedApp {
  app: NestExpressApplication;
  url: string;
  log: CapturedLog;
}

/** A fresh database as an operator names it: a server database, or an embedded one in a directory. */
async function freshDatabase(): Promise<{ env: Record<string, string>; described: string; drop: () => Promise<void> }> {
  const server = serverUrl();
  if (server) {
    const { url, drop } = await createServerDatabase(server);
    return { env: { DATABASE_URL: url }, described: `PostgreSQL server at ${new URL(url).toString()}`, drop };
  }
  const dir = mkdtempSync(join(tmpdir(), 'portcullis-start-'));
  return { env: { DATA_DIR: dir }, described: `embedded PostgreSQL (PGlite) in ${dir}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** The service as main() starts it (startListening), logging at info into memory. */
async function startLogged(env: Record<string, string>): Promise<LoggedApp> {
  const log = captureLog('info');
  const config = loadConfig({ NODE_ENV: 'development', LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', ...env });
  const app = await startListening(config, log.logger);
  const { port } = app.getHttpServer().address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}`, log };
}

describe('the start, as logged at info', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database?.drop());

  it('a restart before setup writes a new setup token; the old one is refused with a message that says why, as the log line does', async () => {
    const tokenOf = (service: LoggedApp): string => service.log.lines().find((line) => typeof line.setupToken === 'string')?.setupToken as string;
    const first = await startLogged(database.env);
    const firstToken = tokenOf(first);
    const tokenLine = first.log.lines().find((line) => line.setupToken === firstToken);
    expect(tokenLine?.msg).toContain('each start without SETUP_TOKEN writes a new one and the earlier ones stop working');
    await first.app.close();

    const second = await startLogged(database.env);
    try {
      const secondToken = tokenOf(second);
      expect(secondToken).toMatch(/^[\w-]{32,}$/);
      expect(secondToken).not.toBe(firstToken);
      const refused = await request(second.url).post('/setup').set('X-Setup-Token', firstToken).send({}).expect(401);
      expect(refused.body).toEqual({
        statusCode: 401,
        errorCode: 'SetupRejected',
        message: expect.stringContaining('the setupToken in the log of the latest start: each start writes a new one and the earlier ones stop working') as string,
      });
      expect(JSON.stringify(refused.body)).not.toContain(secondToken);
    } finally {
      await second.app.close();
    }
  });

  it('fits in under 10 lines: version, URL, database, not set up, and the setup token; no route mapping', async () => {
    const service = await startLogged(database.env);
    try {
      const lines = service.log.lines();
      expect(lines.length).toBeLessThan(10);
      expect(service.log.text()).not.toMatch(/Mapped \{|RoutesResolver|InstanceLoader|Nest application/);

      const tokenLine = lines.find((line) => typeof line.setupToken === 'string');
      expect(tokenLine?.setupToken).toMatch(/^[\w-]{32,}$/);
      const started = lines.find((line) => line.url === service.url);
      expect(started).toMatchObject({ version: VERSION, database: database.described, setUp: false, docs: `${service.url}/docs` });
      expect(started?.msg).toBe(
        `Portcullis ${VERSION} listening on ${service.url}; database: ${database.described}; ` +
          `not set up yet: POST /setup with the setup token; API docs: ${service.url}/docs`,
      );

      await request(service.url)
        .post('/setup')
        .set('X-Setup-Token', tokenLine?.setupToken as string)
        .send({ membership: { name: 'Start' }, user: { username: 'starter', email_address: 'starter@example.com', password: 'long enough pw' } })
        .expect(201);
    } finally {
      await service.app.close();
    }
  });

  it('says "set up" and prints no setup token when restarted on a set-up database', async () => {
    const service = await startLogged({ ...database.env, NODE_ENV: 'production' });
    try {
      const lines = service.log.lines();
      expect(lines.length).toBeLessThan(10);
      expect(lines.some((line) => 'setupToken' in line)).toBe(false);
      const started = lines.find((line) => line.url === service.url);
      expect(started).toMatchObject({ version: VERSION, database: database.described, setUp: true });
      expect(started?.msg).toBe(`Portcullis ${VERSION} listening on ${service.url}; database: ${database.described}; set up`);
    } finally {
      await service.app.close();
    }
  });

  it('warns once when the PostgreSQL server runs with autovacuum off, naming the docs, and never otherwise', async () => {
    const server = serverUrl();
    // autovacuum is a server-wide setting (no database or session may change it): the expectation follows the server.
    const off = server ? (await serverSetting(server, 'autovacuum')) === 'off' : false;
    const service = await startLogged({ ...database.env, NODE_ENV: 'production' });
    try {
      const warnings = service.log.lines().filter((line) => line.autovacuum !== undefined);
      expect(warnings).toHaveLength(off ? 1 : 0);
      if (off) {
        expect(warnings[0]).toMatchObject({ level: 40, autovacuum: 'off', docs: AUTOVACUUM_DOCS });
        expect(warnings[0]?.msg).toContain('autovacuum off');
      }
    } finally {
      await service.app.close();
    }
  });
});

/** A setting of the server, as a client of it reads it. */
async function serverSetting(url: string, name: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ value: string }>('select current_setting($1) as value', [name]);
    return rows[0]?.value ?? '';
  } finally {
    await client.end();
  }
}

describe('failed sign-ins', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let service: LoggedApp;
  let install: Installation;

  beforeAll(async () => {
    database = await freshDatabase();
    service = await startLogged({ ...database.env, SETUP_TOKEN: TEST_SETUP_TOKEN });
    // setupInstallation speaks HTTP only through `http`.
    install = await setupInstallation({ http: () => request(service.url) } as TestApp);
  });
  afterAll(async () => {
    await service?.app.close();
    await database?.drop();
  });

  const signIn = (membershipId: string | undefined, body: object) => {
    const call = request(service.url).post('/generate-token');
    return (membershipId === undefined ? call : call.set('X-Service-Alias', membershipId)).send(body);
  };
  const failures = async (): Promise<Record<string, number>> => {
    const { metrics } = await scrapeMetrics(service);
    return Object.fromEntries(metrics.find('portcullis_sign_in_failures_total').map((sample) => [sample.labels.reason, sample.value]));
  };

  it('are counted per reason and logged at info with code and membership, never with the password', async () => {
    const m = install.admin.membershipId;
    const inactive = await request(service.url)
      .post(`/memberships/${m}/users`)
      .set('Authorization', install.admin.auth)
      .send({ username: 'dormant', email_address: 'dormant@example.com', password: 'dormant-password-7f3k', is_active: false })
      .expect(201);
    expect(inactive.body.is_active).toBe(false);
    expect(await failures()).toEqual({ MembershipIdRequired: 0, ModelValidationError: 0, MembershipNotFound: 0, InvalidCredentials: 0, UserInactive: 0, locked: 0 });
    service.log.clear();

    await signIn(m, { username: install.admin.username, password: 'wrong-password-q8z2x' }).expect(401);
    await signIn(m, { username: 'nobody-here', password: 'wrong-password-q8z2x' }).expect(401);
    await signIn(m, { username: 'dormant', password: 'dormant-password-7f3k' }).expect(401);
    await signIn('no-such-membership', { username: 'dormant', password: 'wrong-password-q8z2x' }).expect(404);
    await signIn(undefined, { username: 'dormant', password: 'wrong-password-q8z2x' }).expect(400);
    await signIn(m, { username: 'dormant' }).expect(400);
    await signIn(m, { username: install.admin.username, password: install.admin.password }).expect(201);

    expect(await failures()).toEqual({ MembershipIdRequired: 1, ModelValidationError: 1, MembershipNotFound: 1, InvalidCredentials: 2, UserInactive: 1, locked: 0 });
    const logged = service.log.lines().filter((line) => line.msg === 'sign-in failed');
    expect(logged.map((line) => [line.level, line.errorCode, line.membershipId])).toEqual([
      [30, 'InvalidCredentials', m],
      [30, 'InvalidCredentials', m],
      [30, 'UserInactive', m],
      [30, 'MembershipNotFound', 'no-such-membership'],
      [30, 'MembershipIdRequired', undefined],
      [30, 'ModelValidationError', m],
    ]);
    const text = service.log.text();
    for (const secret of ['wrong-password-q8z2x', 'dormant-password-7f3k', install.admin.password, install.admin.accessToken]) {
      expect(text).not.toContain(secret);
    }
  });
});
