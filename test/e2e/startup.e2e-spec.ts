import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startServiceProcess } from '../support/process';

// server pass: none. Every service here runs on the embedded database (a DATA_DIR, or memory://),
// whatever TEST_DATABASE_URL says: CI's second pass, on the PostgreSQL server, would run the very
// same tests again, and leaves this file out (.ci/run).

/** The service as an operator runs it: `node dist/main.js` with environment variables. */
describe('starting the service', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-data-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const listening = (entry: Record<string, unknown>) => typeof entry.url === 'string' && typeof entry.database === 'string';

  it('prints where it listens, the database and a setup token; data survives a restart', async () => {
    const first = startServiceProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    try {
      const setupLine = await first.waitForLog((e) => typeof e.setupToken === 'string');
      const started = await first.waitForLog(listening);
      expect(started.database).toBe(`embedded PostgreSQL (PGlite) in ${dataDir}`);
      const url = started.url as string;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      await request(url).get('/healthcheck').expect(200, { status: 'Unhealthy', message: 'The installation has not been set up yet' });
      const setup = await request(url)
        .post('/setup')
        .set('X-Setup-Token', setupLine.setupToken as string)
        .send({ membership: { name: 'Persisted' }, user: { username: 'keeper', email_address: 'keeper@example.com', password: 'long enough pw' } });
      expect(setup.status).toBe(201);
      await request(url).get('/healthcheck').expect(200, { status: 'Healthy' });
      // No secret of the setup answer reaches the log.
      expect(first.lines.join('\n')).not.toContain(setup.body.membership.secret_key);
      expect(await first.stop()).toBe(0);

      const second = startServiceProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
      try {
        const again = await second.waitForLog(listening);
        await request(again.url as string).get('/healthcheck').expect(200, { status: 'Healthy' });
        const signIn = await request(again.url as string)
          .post('/generate-token')
          .set('X-Service-Alias', setup.body.membership._id)
          .send({ username: 'keeper', password: 'long enough pw' });
        expect(signIn.status).toBe(201);
        // Set up already: no new setup token is generated or logged.
        expect(second.lines.some((line) => line.includes('setupToken'))).toBe(false);
        expect(second.lines.join('\n')).not.toContain(signIn.body.access_token);
      } finally {
        await second.stop();
      }
    } finally {
      await first.stop();
    }
  }, 240_000);

  it.each([
    ['PORT', 'abc', /PORT must be a whole number/],
    ['DATABASE_URL', 'mysql://x', /DATABASE_URL must use postgres:\/\/ or memory:\/\//],
    ['SETUP_TOKEN', 'short', /SETUP_TOKEN must be at least 32 characters/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL must be one of/],
    ['OUTBOUND_ALLOW', '127.0.0.1/32,10.0.0.0/33', /OUTBOUND_ALLOW must be comma-separated CIDRs, IP addresses and host names: entry "10\.0\.0\.0\/33"/],
  ])('a bad %s stops the start with one line naming it', async (name, value, message) => {
    const service = startServiceProcess({ DATABASE_URL: 'memory://', [name]: value });
    expect(await service.exited).toBe(1);
    const output = service.lines.filter((line) => line.trim());
    expect(output).toHaveLength(1);
    expect(output[0]).toMatch(message);
  });
});
