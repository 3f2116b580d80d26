import { startTestApp, TEST_SETUP_TOKEN, type TestApp } from '../support/app';
import { unique } from '../support/api';
import { captureLog } from '../support/log-capture';

describe('foundation: health, setup, error path', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('serves /ping without the database and reports "not set up yet" before setup', async () => {
    const ping = await t.http().get('/ping');
    expect(ping.status).toBe(200);
    expect(ping.text).toBe('Pong');
    expect(ping.headers['x-request-id']).toBeTruthy();

    const health = await t.http().get('/healthcheck');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'Unhealthy', message: 'The installation has not been set up yet' });
  });

  it('rejects setup without or with a wrong token', async () => {
    const body = {
      membership: { name: 'X' },
      user: { username: 'root', email_address: 'root@example.com', password: 'long enough' },
    };
    const missing = await t.http().post('/setup').send(body);
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ statusCode: 401, errorCode: 'SetupRejected' });
    expect(missing.headers['www-authenticate']).toBeTruthy();
    const wrong = await t.http().post('/setup').set('X-Setup-Token', 'x'.repeat(40)).send(body);
    expect(wrong.status).toBe(401);
    expect(wrong.body.errorCode).toBe('SetupRejected');
  });

  it('validates the setup body with field errors', async () => {
    const res = await t
      .http()
      .post('/setup')
      .set('X-Setup-Token', TEST_SETUP_TOKEN)
      .send({ membership: { name: 5 }, user: { username: 'a b', email_address: 'nope', password: 'short' }, extra: true });
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe('ModelValidationError');
    const fields = (res.body.errors as { field: string }[]).map((e) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['membership.name', 'user.username', 'user.email_address', 'user.password', 'extra']));
  });

  it('ten concurrent setups create exactly one installation', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t
          .http()
          .post('/setup')
          .set('X-Setup-Token', TEST_SETUP_TOKEN)
          .send({
            membership: { name: unique(`Race${i}`) },
            user: { username: `root${i}`, email_address: `root${i}@example.com`, password: 'long enough password' },
          }),
      ),
    );
    const statuses = attempts.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(9);
    for (const r of attempts.filter((a) => a.status === 409)) expect(r.body.errorCode).toBe('AlreadySetUp');

    const health = await t.http().get('/healthcheck');
    expect(health.body).toEqual({ status: 'Healthy' });
  });

  it('answers a second setup with 409 AlreadySetUp', async () => {
    const res = await t
      .http()
      .post('/setup')
      .set('X-Setup-Token', TEST_SETUP_TOKEN)
      .send({ membership: { name: 'Again' }, user: { username: 'again', email_address: 'again@example.com', password: 'long enough' } });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ statusCode: 409, errorCode: 'AlreadySetUp', message: expect.any(String) });
  });

  describe('hostile input gets the error body, never a 500', () => {
    it('unknown route: 404 JSON', async () => {
      const res = await t.http().get('/no/such/route');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ statusCode: 404, errorCode: 'NotFound', message: expect.any(String) });
    });

    it('malformed JSON: 400', async () => {
      const res = await t.http().post('/generate-token').set('Content-Type', 'application/json').send('{"username": ');
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('MalformedJson');
    });

    it('wrong content type: 415', async () => {
      const res = await t.http().post('/generate-token').set('Content-Type', 'text/plain').send('username=a');
      expect(res.status).toBe(415);
      expect(res.body.errorCode).toBe('UnsupportedMediaType');
    });

    it('a 2 MiB body: 413', async () => {
      const res = await t
        .http()
        .post('/generate-token')
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ username: 'x'.repeat(2 * 1024 * 1024) }));
      expect(res.status).toBe(413);
      expect(res.body.errorCode).toBe('PayloadTooLarge');
    });

    it('wrong field types and unknown fields: 400 with field errors', async () => {
      const res = await t.http().post('/generate-token').set('X-Service-Alias', 'x').send({ username: 5, password: [], admin: true });
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
      expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(expect.arrayContaining(['username', 'password', 'admin']));
    });

    it('a 10 KB password: 4xx before any hashing', async () => {
      const res = await t.http().post('/generate-token').set('X-Service-Alias', 'x').send({ username: 'a', password: 'p'.repeat(10_000) });
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
    });

    it('a JSON body that is not an object: 400', async () => {
      const res = await t.http().post('/generate-token').set('Content-Type', 'application/json').send('"just a string"');
      expect(res.status).toBe(400);
    });

    it('keeps a sane incoming X-Request-Id and replaces a hostile one', async () => {
      const kept = await t.http().get('/ping').set('X-Request-Id', 'abc-123');
      expect(kept.headers['x-request-id']).toBe('abc-123');
      const replaced = await t.http().get('/ping').set('X-Request-Id', 'a b<script>');
      expect(replaced.headers['x-request-id']).not.toBe('a b<script>');
    });
  });
});

describe('the request log: one line per request', () => {
  const log = captureLog('info');
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ logger: log.logger });
  });
  afterAll(() => t.close());

  const requestLines = () => log.lines().filter((line) => line.msg === 'request');

  it('says the id the answer carried, the route template (never the URL), the status and the duration', async () => {
    log.clear();
    const kept = await t.http().get('/memberships/mbr_not_there/users').set('X-Request-Id', 'trace-42');
    const fresh = await t.http().get('/ping');
    // The line is written when the answer has been sent: wait for both.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const lines = requestLines();
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ requestId: 'trace-42', method: 'GET', route: '/memberships/:membershipId/users', status: kept.status });
    expect(lines[1]).toMatchObject({ requestId: fresh.headers['x-request-id'], method: 'GET', route: '/ping', status: 200 });
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    for (const line of lines) expect(typeof line.durationMs).toBe('number');
    expect(log.text()).not.toContain('mbr_not_there');
  });

  it('counts a request refused before routing under the route it addressed', async () => {
    log.clear();
    const refused = await t.http().post('/generate-token').set('Content-Type', 'text/plain').send('x');
    expect(refused.status).toBe(415);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(requestLines()).toEqual([expect.objectContaining({ requestId: refused.headers['x-request-id'], route: '/generate-token', status: 415 })]);
  });
});
