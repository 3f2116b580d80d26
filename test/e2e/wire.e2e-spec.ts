import { connect } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { Response } from 'supertest';
import { loadConfig } from '../../src/config/config';
import { startTestApp, type TestApp } from '../support/app';
import { bootInstallation, createApplication, expectErrorBody, type Installation, signIn } from '../support/api';
import { routeTable } from '../support/route-table';
import { isOpenIdProviderPath } from '../../src/common/http';

/**
 * Wire conventions of the contract: input hygiene before the database, one answer for every Basic
 * problem, Cache-Control and WWW-Authenticate, and the CORS setting.
 */

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/** Everything an answer says, except what differs by request (its id and its date). */
function wholeAnswer(res: Response): { status: number; headers: Record<string, unknown>; text: string } {
  const headers: Record<string, unknown> = { ...res.headers };
  delete headers['x-request-id'];
  delete headers.date;
  return { status: res.status, headers, text: res.text };
}

const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

describe('wire conventions', () => {
  let t: TestApp;
  let inst: Installation;
  let m: string;

  beforeAll(async () => {
    ({ t, inst } = await bootInstallation({ env: { NODE_ENV: 'development' } }));
    m = inst.membership._id as string;
  });
  afterAll(() => t.close());

  describe('input hygiene (issue 15 point 7)', () => {
    it('a NUL, an invalid UTF-8 sequence or an over-long value in a path id answers 400 or 404 on every route with an id', async () => {
      const routes = routeTable(t.app).filter((route) => route.path.includes(':'));
      expect(routes.length).toBeGreaterThan(20);
      const hostileIds = ['%00', 'a%00b', '%FF', '%C0%AF', '%ED%A0%80', 'x'.repeat(129), `${UNKNOWN_ID}%00`];
      const answers: string[] = [];
      for (const route of routes) {
        for (const hostile of hostileIds) {
          for (const param of route.path.match(/:[A-Za-z]+/g) ?? []) {
            // The hostile value in one parameter, real values in the others.
            const path = route.path.replace(/:[A-Za-z]+/g, (name) => (name === param ? hostile : name === ':membershipId' ? m : UNKNOWN_ID));
            const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
            // The OpenID Provider's routes take form bodies (JSON there is 415 before any route runs).
            const call = t.http()[method](path).set('Authorization', inst.admin.auth);
            const res = isOpenIdProviderPath(route.path) && method === 'post' ? await call.type('form').send({}) : await call.send({});
            answers.push(`${route.method} ${route.path} ${param}=${hostile.slice(0, 12)} ${res.status} ${res.body?.errorCode}`);
            expect({ path: `${route.method} ${path.slice(0, 120)}`, ok: [400, 404].includes(res.status) }).toEqual({
              path: `${route.method} ${path.slice(0, 120)}`,
              ok: true,
            });
          }
        }
      }
      expect(answers.some((line) => / 500 /.test(line))).toBe(false);
    });

    it('a NUL or an invalid UTF-8 sequence in a query value or name answers 400', async () => {
      for (const query of ['where=%00', 'keyword=a%00', 'limit=%FF', 'sort=%ED%A0%80', '%00=1', 'a%C3=1']) {
        for (const path of [`/memberships/${m}/users`, `/memberships/${m}/users/search`, `/memberships/${m}/events`, '/roles/check-permission']) {
          const res = await t.http().get(`${path}?${query}`).set('Authorization', inst.admin.auth);
          expect({ path, query, status: res.status, code: res.body.errorCode }).toEqual({ path, query, status: 400, code: 'ModelValidationError' });
        }
      }
    });

    it('a NUL anywhere in a JSON body, or raw bytes that are not UTF-8, answer 400 before the database', async () => {
      const users = `/memberships/${m}/users`;
      const nulBodies = [
        { username: 'nul\u0000user', email_address: 'nul@example.com', password: 'a long enough password' },
        { username: 'nuluser', email_address: 'nul@example.com', password: 'a long enough password', firstname: '\u0000' },
        { username: 'nuluser', email_address: 'nul@example.com', password: 'a long enough password', ['k\u0000']: 1 },
      ];
      for (const body of nulBodies) {
        const res = await t.http().post(users).set('Authorization', inst.admin.auth).send(body);
        expect({ status: res.status, code: res.body.errorCode }).toEqual({ status: 400, code: 'ModelValidationError' });
      }
      const query = await t
        .http()
        .post(`${users}/_query`)
        .set('Authorization', inst.admin.auth)
        .send({ where: { username: { $in: ['a', 'b\u0000'] } } });
      expect({ status: query.status, code: query.body.errorCode }).toEqual({ status: 400, code: 'ModelValidationError' });

      // "username": "ab<0xff>cd": body-parser would quietly turn the byte into U+FFFD.
      const raw = Buffer.concat([Buffer.from('{"username":"ab'), Buffer.from([0xff]), Buffer.from('cd","email_address":"r@example.com","password":"a long enough password"}')]);
      // fetch, not supertest: supertest sends a Buffer as its JSON description, not as bytes.
      const res = await fetch(`${t.url}${users}`, { method: 'POST', headers: { Authorization: inst.admin.auth, 'Content-Type': 'application/json' }, body: raw });
      expect({ status: res.status, body: await res.json() }).toEqual({
        status: 400,
        body: expect.objectContaining({ errorCode: 'ModelValidationError', errors: [{ field: 'request.body', message: 'must be UTF-8 text' }] }),
      });
    });

    it('an over-long Basic application id is the usual InvalidToken, and a NUL in it never reaches the database', async () => {
      for (const id of ['x'.repeat(200), 'a\u0000b']) {
        const res = await t.http().get('/me').set('Authorization', `Basic ${base64(`${id}:secret`)}`);
        expect({ status: res.status, code: res.body.errorCode }).toEqual({ status: 401, code: 'InvalidToken' });
      }
    });
  });

  describe('Basic problems (issue 15 point 8)', () => {
    it('every Basic problem has the same answer, byte for byte, on an authenticated route and a permission route', async () => {
      const doomed = await createApplication(t, inst.admin, { role: 'admin' });
      const deleted = await t.http().delete(`/memberships/${m}/applications/${doomed.id}`).set('Authorization', inst.admin.auth);
      expect(deleted.status).toBe(204);
      const problems: Record<string, string> = {
        'bad base64': 'Basic !!!not-base64!!!',
        'base64 without a colon': `Basic ${base64('no-colon-here')}`,
        'plain without a colon': 'Basic abc',
        'empty id': 'Basic :some-secret',
        'empty id, base64': `Basic ${base64(':some-secret')}`,
        'empty secret': `Basic ${inst.application.id}:`,
        'empty secret, base64': `Basic ${base64(`${inst.application.id}:`)}`,
        'only a colon': 'Basic :',
        'unknown id': `Basic ${UNKNOWN_ID}:${inst.application.secret}`,
        'impossible id': `Basic ${'%'.repeat(10)}:${inst.application.secret}`,
        'wrong secret': `Basic ${inst.application.id}:wrong-secret`,
        'wrong secret, base64': `Basic ${base64(`${inst.application.id}:wrong-secret`)}`,
        'deleted application': doomed.basic,
      };
      for (const path of ['/me', `/memberships/${m}/users`]) {
        const answers: Record<string, ReturnType<typeof wholeAnswer>> = {};
        for (const [name, auth] of Object.entries(problems)) {
          answers[name] = wholeAnswer(await t.http().get(path).set('Authorization', auth));
        }
        const reference = answers['wrong secret'];
        expect(reference.status).toBe(401);
        expect(JSON.parse(reference.text)).toMatchObject({ statusCode: 401, errorCode: 'InvalidToken' });
        expect(reference.headers['www-authenticate']).toBe('Basic realm="portcullis"');
        for (const [name, answer] of Object.entries(answers)) {
          expect({ name, answer }).toEqual({ name, answer: reference });
        }
      }
    });
  });

  describe('headers (issue 15 point 9)', () => {
    it('answers that carry tokens, secrets or user data, and errors, say Cache-Control: no-store', async () => {
      const answers: [string, Response][] = [
        ['sign-in', await t.http().post('/generate-token').set('X-Service-Alias', m).send({ username: inst.admin.username, password: inst.admin.password })],
        ['refresh', await t.http().post('/refresh-token').send({ refresh_token: inst.admin.refreshToken })],
        ['me', await t.http().get('/me').set('Authorization', inst.admin.auth)],
        ['application secret', await t.http().post(`/memberships/${m}/applications/${inst.application.id}/secret`).set('Authorization', inst.admin.auth)],
        ['users', await t.http().get(`/memberships/${m}/users`).set('Authorization', inst.admin.auth)],
        ['healthcheck', await t.http().get('/healthcheck')],
        ['401', await t.http().get('/me')],
        ['400', await t.http().get(`/memberships/${m}/users?limit=x`).set('Authorization', inst.admin.auth)],
        ['404 route', await t.http().get('/no/such/route')],
        ['415', await t.http().post('/generate-token').set('Content-Type', 'text/plain').send('x')],
        ['400 malformed JSON', await t.http().post('/generate-token').set('Content-Type', 'application/json').send('{')],
      ];
      for (const [name, res] of answers) {
        expect({ name, status: res.status < 500, cacheControl: res.headers['cache-control'] }).toEqual({ name, status: true, cacheControl: 'no-store' });
      }
    });

    it('/openapi/* and /docs are left cacheable (the rule adds nothing there, nor to /ping and /metrics)', async () => {
      for (const path of ['/openapi/v1.json', '/docs']) {
        const res = await t.http().get(path);
        expect({ path, status: res.status < 400, cacheControl: res.headers['cache-control'] }).toEqual({ path, status: true, cacheControl: undefined });
      }
      // /ping and /metrics keep the header their controllers set themselves.
      for (const path of ['/ping', '/metrics']) expect((await t.http().get(path)).status).toBe(200);
    });

    it('WWW-Authenticate follows RFC 6750 for Bearer problems and RFC 7617 for Basic', async () => {
      const none = await t.http().get('/me');
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toBe('Bearer realm="portcullis"');
      expect(none.body.errorCode).toBe('InvalidToken');

      const bad = await t.http().get('/me').set('Authorization', 'Bearer not.a.jwt');
      expect(bad.status).toBe(401);
      expect(bad.body.errorCode).toBe('InvalidToken');
      expect(bad.headers['www-authenticate']).toBe(`Bearer realm="portcullis", error="invalid_token", error_description="${bad.body.message}"`);

      const basic = await t.http().get('/me').set('Authorization', `Basic ${inst.application.id}:wrong`);
      expect(basic.headers['www-authenticate']).toBe('Basic realm="portcullis"');

      const ok = await t.http().get('/me').set('Authorization', inst.admin.auth);
      expect(ok.status).toBe(200);
      expect(ok.headers['www-authenticate']).toBeUndefined();
    });
  });

  describe('token routes and scopes (issue 36 point 8)', () => {
    const newSession = () => signIn(t, m, inst.admin.username, inst.admin.password);

    it('POST /verify-token, /refresh-token and /revoke-token read the token from Authorization when the body names none; the body wins', async () => {
      const session = await newSession();
      const verified = await t.http().post('/verify-token').set('Authorization', session.auth).expect(200);
      expect(verified.body).toMatchObject({ verified: true, token_kind: 'access_token' });
      // An application of its own: another test here rotates the setup's application secret.
      const application = await createApplication(t, inst.admin);
      const basic = await t.http().post('/verify-token').set('Authorization', application.basic).expect(200);
      expect(basic.body).toMatchObject({ verified: true });
      // The body wins: an application may authenticate itself in the header and ask about another token.
      const other = await t.http().post('/verify-token').set('Authorization', application.basic).send({ token: 'Bearer not.a.jwt' });
      expect({ status: other.status, code: other.body.errorCode }).toEqual({ status: 401, code: 'InvalidToken' });
      const none = await t.http().post('/verify-token');
      expect({ status: none.status, code: none.body.errorCode }).toEqual({ status: 401, code: 'InvalidToken' });

      const refreshed = await t.http().post('/refresh-token').set('Authorization', `Bearer ${session.refreshToken}`).expect(201);
      expect(refreshed.body.refresh_token).toEqual(expect.any(String));
      const missing = await t.http().post('/refresh-token');
      expect({ status: missing.status, code: missing.body.errorCode }).toEqual({ status: 400, code: 'RefreshTokenRequired' });

      await t.http().post('/revoke-token').set('Authorization', `Bearer ${refreshed.body.access_token}`).expect(204);
      await t.http().get('/me').set('Authorization', `Bearer ${refreshed.body.access_token}`).expect(401);
    });

    it('a scoped token refused for its scopes says WWW-Authenticate: Bearer error="insufficient_scope" (RFC 6750 3.1); other 403s do not', async () => {
      const session = await newSession();
      const scoped = await t.http().post('/generate-token').set('Authorization', session.auth).send({ scopes: ['users.read'] }).expect(201);
      const scopedAuth = `Bearer ${scoped.body.access_token}`;
      await t.http().get(`/memberships/${m}/users`).set('Authorization', scopedAuth).expect(200);

      const refused = await t.http().get(`/memberships/${m}/roles`).set('Authorization', scopedAuth);
      expect({ status: refused.status, code: refused.body.errorCode }).toEqual({ status: 403, code: 'AccessDenied' });
      expect(refused.headers['www-authenticate']).toBe(
        `Bearer realm="portcullis", error="insufficient_scope", error_description="${refused.body.message}"`,
      );
      const logoutAll = await t.http().get('/revoke-token?logout-all=true').set('Authorization', scopedAuth);
      expect(logoutAll.status).toBe(403);
      expect(logoutAll.headers['www-authenticate']).toContain('error="insufficient_scope"');

      // Another membership's route: denied whatever the scopes, so no scope challenge.
      const elsewhere = await t.http().get('/memberships/00000000-0000-4000-8000-00000000abcd/roles').set('Authorization', session.auth);
      expect(elsewhere.status).toBeGreaterThanOrEqual(403);
      expect(elsewhere.headers['www-authenticate']).toBeUndefined();
    });

    it('/ping, /healthcheck and /metrics answer hostile input with 400, as their OpenAPI entries say', async () => {
      for (const path of ['/ping', '/healthcheck', '/metrics']) {
        const res = await t.http().get(`${path}?x=%00`);
        expect({ path, status: res.status, code: res.body.errorCode }).toEqual({ path, status: 400, code: 'ModelValidationError' });
      }
    });
  });

  describe('what a client can get wrong on the wire (audit of 2026-11-29)', () => {
    /** Raw bytes to the service, and its whole answer (the connection closes after it). */
    const rawExchange = (request: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const { hostname, port } = new URL(t.url);
        const socket = connect(Number(port), hostname, () => socket.end(Buffer.from(request, 'latin1')));
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
        socket.on('error', reject);
        socket.on('close', () => resolve(answer));
      });
    const bodyOf = (answer: string): unknown => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

    it('a body that does not decompress as its Content-Encoding says answers 400, JSON and form routes alike', async () => {
      // fetch, which sends the bytes as given (supertest would serialise a Buffer as JSON).
      const post = async (path: string, type: string, encoding: string, bytes: Buffer) => {
        const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { 'content-type': type, 'content-encoding': encoding, 'x-service-alias': m }, body: bytes });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const credentials = JSON.stringify({ username: inst.admin.username, password: inst.admin.password });
      const cut = gzipSync(credentials).subarray(0, 12);
      for (const [encoding, bytes] of [['gzip', Buffer.from('abcd')], ['deflate', Buffer.from('abcd')], ['br', Buffer.from('abcd')], ['gzip', cut]] as const) {
        const json = await post('/generate-token', 'application/json', encoding, bytes);
        expect({ encoding, ...json }).toEqual({ encoding, status: 400, body: { statusCode: 400, errorCode: 'MalformedJson', message: expect.stringContaining('decompress') } });
        const form = await post(`/oidc/${m}/token`, 'application/x-www-form-urlencoded', encoding, bytes);
        expect({ encoding, status: form.status, error: form.body.error }).toEqual({ encoding, status: 400, error: 'invalid_request' });
      }
      // A body that does decompress is read as usual.
      for (const [encoding, bytes] of [['gzip', gzipSync(credentials)], ['br', brotliCompressSync(credentials)]] as const) {
        expect({ encoding, status: (await post('/generate-token', 'application/json', encoding, bytes)).status }).toEqual({ encoding, status: 201 });
      }
    });

    it('an array where an object is expected answers 400 naming the field, and stores nothing', async () => {
      const auth = inst.admin.auth;
      const webhook = { name: 'w', event: 'UserCreated', status: 'passive', try_count: 1 };
      const cases: [string, () => Promise<Response>, string][] = [
        ['webhook request []', () => t.http().post(`/memberships/${m}/webhooks`).set('Authorization', auth).send({ ...webhook, request: [] }), 'request'],
        [
          'webhook request [object]',
          () => t.http().post(`/memberships/${m}/webhooks`).set('Authorization', auth).send({ ...webhook, request: [{ method: 'POST', url: 'http://127.0.0.1:9/' }] }),
          'request',
        ],
        ['application oidc []', () => t.http().post(`/memberships/${m}/applications`).set('Authorization', auth).send({ name: 'app', role: 'admin', oidc: [] }), 'oidc'],
        [
          'membership []',
          () => t.http().post('/memberships').set('Authorization', auth).send({ membership: [], user: { username: 'a', email_address: 'a@example.com', password: 'long enough!' } }),
          'membership',
        ],
        ['first user []', () => t.http().post('/memberships').set('Authorization', auth).send({ membership: { name: 'Zed' }, user: [] }), 'user'],
        ['mail provider [[]]', () => t.http().put(`/memberships/${m}`).set('Authorization', auth).send({ name: inst.membership.name, mail_providers: [[]] }), 'mail_providers'],
      ];
      for (const [name, send, field] of cases) {
        const res = await send();
        expect({ name, status: res.status, code: res.body.errorCode, fields: (res.body.errors ?? []).map((e: { field: string }) => e.field) }).toEqual({
          name,
          status: 400,
          code: 'ModelValidationError',
          fields: expect.arrayContaining([field]),
        });
      }
      const webhooks = await t.http().get(`/memberships/${m}/webhooks`).set('Authorization', auth);
      expect(webhooks.body.items).toEqual([]);
    });

    it('a __proto__ or constructor key, at the top or nested, is refused like any undeclared field', async () => {
      const auth = inst.admin.auth;
      const cases: [string, string, string][] = [
        [`/memberships/${m}/roles`, '{"name":"pr1","permissions":[],"__proto__":{"x":1}}', '__proto__'],
        [`/memberships/${m}/roles`, '{"name":"pr2","permissions":[],"constructor":{"x":1}}', 'constructor'],
        [
          `/memberships/${m}/webhooks`,
          '{"name":"w","event":"UserCreated","status":"passive","try_count":1,"request":{"method":"POST","url":"http://127.0.0.1:9/","__proto__":{"x":1}}}',
          'request.__proto__',
        ],
      ];
      for (const [path, body, field] of cases) {
        const res = await t.http().post(path).set('Authorization', auth).set('Content-Type', 'application/json').send(body);
        expectErrorBody(res, 400, 'ModelValidationError');
        expect(res.body.errors).toEqual([{ field, message: `property ${field.split('.').pop()} should not exist` }]);
      }
      const signIn = await t.http().post('/generate-token').set('X-Service-Alias', m).set('Content-Type', 'application/json')
        .send(`{"username":"${inst.admin.username}","password":"${inst.admin.password}","__proto__":{"scopes":["users.read"]}}`);
      expectErrorBody(signIn, 400, 'ModelValidationError');
    });

    it('HEAD does not run a GET that changes state: 405 with Allow, and the tokens still work', async () => {
      const session = await signIn(t, m, inst.admin.username, inst.admin.password);
      for (const [path, token] of [['/refresh-token', session.refreshToken], ['/revoke-token', session.accessToken], ['/REVOKE-TOKEN/', session.accessToken]]) {
        const res = await t.http().head(path).set('Authorization', `Bearer ${token}`);
        expect({ path, status: res.status, allow: res.headers.allow }).toEqual({ path, status: 405, allow: 'GET, POST' });
      }
      const logout = await t.http().head(`/oidc/${m}/logout`);
      expect({ status: logout.status, allow: logout.headers.allow }).toEqual({ status: 405, allow: 'GET, POST' });
      expect((await t.http().get('/me').set('Authorization', session.auth)).status).toBe(200);
      expect((await t.http().get('/refresh-token').set('Authorization', `Bearer ${session.refreshToken}`)).status).toBe(201);
      // A safe GET still answers HEAD.
      expect((await t.http().head('/ping')).status).toBe(200);
    });

    it('what Node refuses before any route (a raw space or byte in the target, an unknown method, no Host) answers with the error body', async () => {
      for (const request of ['GET /a b HTTP/1.1\r\nHost: x\r\n\r\n', 'FOO /ping HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /\xff HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /ping HTTP/1.1\r\n\r\n']) {
        const answer = await rawExchange(request);
        expect({ request, status: answer.split('\r\n', 1)[0], body: bodyOf(answer) }).toEqual({
          request,
          status: 'HTTP/1.1 400 Bad Request',
          body: { statusCode: 400, errorCode: 'MalformedRequest', message: expect.any(String) },
        });
      }
    });

    it('CONNECT answers 405 with the error body and an empty Allow, not a closed connection', async () => {
      for (const request of ['CONNECT 127.0.0.1:5432 HTTP/1.1\r\nHost: 127.0.0.1:5432\r\n\r\n', 'CONNECT /me HTTP/1.1\r\nHost: x\r\n\r\n']) {
        const answer = await rawExchange(request);
        const [status, ...headers] = answer.slice(0, answer.indexOf('\r\n\r\n')).split('\r\n');
        expect({ request, status, allow: headers.find((header) => /^allow:/i.test(header)), body: bodyOf(answer) }).toEqual({
          request,
          status: 'HTTP/1.1 405 Method Not Allowed',
          allow: 'Allow: ',
          body: { statusCode: 405, errorCode: 'MethodNotAllowed', message: expect.any(String) },
        });
      }
      // The service goes on answering.
      expect((await t.http().get('/ping')).status).toBe(200);
    });

    it('a query parameter named with brackets (types[]=..., as axios sends a list) is refused, not ignored', async () => {
      for (const query of ['limit[]=1', 'with_count%5B%5D=true', 'sort[x]=created_at']) {
        const res = await t.http().get(`/memberships/${m}/users?${query}`).set('Authorization', inst.admin.auth);
        expect({ query, status: res.status, field: res.body.errors?.[0]?.field }).toEqual({ query, status: 400, field: 'request.query' });
      }
      const stream = await t.http().get(`/memberships/${m}/events/stream?types[]=UserCreated`).set('Authorization', inst.admin.auth);
      expectErrorBody(stream, 400, 'ModelValidationError');
      // Brackets in a value are a value's business.
      expect((await t.http().get(`/roles/check-permission?permission=${encodeURIComponent('users.read')}&note=[x]`).set('Authorization', inst.admin.auth)).status).toBe(200);
    });
  });

  describe('CORS', () => {
    it('allows any origin by default', async () => {
      for (const origin of ['https://one.example', 'http://localhost:8080']) {
        const res = await t.http().get('/ping').set('Origin', origin);
        expect(res.headers['access-control-allow-origin']).toBe(origin);
        const preflight = await t.http().options('/me').set('Origin', origin).set('Access-Control-Request-Method', 'GET');
        expect(preflight.status).toBeLessThan(300);
        expect(preflight.headers['access-control-allow-origin']).toBe(origin);
      }
    });

    it('CORS_ORIGINS restricts it: an allowed origin is echoed, another is not', async () => {
      const restricted = await startTestApp({ env: { CORS_ORIGINS: 'https://app.example, https://admin.example' } });
      try {
        for (const origin of ['https://app.example', 'https://admin.example']) {
          const res = await restricted.http().get('/ping').set('Origin', origin);
          expect(res.headers['access-control-allow-origin']).toBe(origin);
          const preflight = await restricted.http().options('/me').set('Origin', origin).set('Access-Control-Request-Method', 'GET');
          expect(preflight.headers['access-control-allow-origin']).toBe(origin);
        }
        for (const origin of ['https://evil.example', 'https://app.example.evil.example', 'null']) {
          const res = await restricted.http().get('/ping').set('Origin', origin);
          expect({ origin, allowed: res.headers['access-control-allow-origin'] }).toEqual({ origin, allowed: undefined });
          const preflight = await restricted.http().options('/me').set('Origin', origin).set('Access-Control-Request-Method', 'GET');
          expect({ origin, allowed: preflight.headers['access-control-allow-origin'] }).toEqual({ origin, allowed: undefined });
        }
      } finally {
        await restricted.close();
      }
    });

    it('refuses a CORS_ORIGINS value that is not a list of origins', () => {
      for (const value of ['app.example', 'https://app.example/path', 'https://a.example,,ftp://b.example']) {
        expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS/);
      }
      expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://127.0.0.1:8080' }).corsOrigins).toEqual(['https://a.example', 'http://127.0.0.1:8080']);
    });
  });
});
