import { startTestApp, type TestApp } from '../support/app';
import { createServerDatabase, serverUrl } from '../support/database';
import { setupInstallation } from '../support/api';
import { TcpProxy } from '../support/tcp-proxy';

const server = serverUrl();
const describeWithServer = server ? describe : describe.skip;
if (!server) console.warn('database-outage: skipped, TEST_DATABASE_URL is not set (CI sets it)');

describeWithServer('the database becomes unreachable and comes back', () => {
  let t: TestApp;
  let proxy: TcpProxy;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const created = await createServerDatabase(server!);
    drop = created.drop;
    const target = new URL(created.url);
    proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
    const port = await proxy.start();
    target.host = `127.0.0.1:${port}`;
    t = await startTestApp({ databaseUrl: target.toString() });
    await setupInstallation(t);
  });
  afterAll(async () => {
    await t.close();
    await proxy.cut();
    await drop();
  });

  it('answers /healthcheck 500 without driver text, keeps /ping and the process up, and recovers', async () => {
    await t.http().get('/healthcheck').expect(200, { status: 'Healthy' });
    await proxy.cut();

    const down = await t.http().get('/healthcheck');
    expect(down.status).toBe(500);
    expect(down.body).toEqual({ status: 'Unhealthy', message: 'The database is unreachable' });
    expect(JSON.stringify(down.body)).not.toMatch(/ECONNREFUSED|connect|terminat|127\.0\.0\.1/i);
    await t.http().get('/ping').expect(200, 'Pong');

    // Requests that need the database fail with the generic 500, no driver detail.
    const signIn = await t.http().post('/generate-token').set('X-Service-Alias', 'x').send({ username: 'a', password: 'b' });
    expect(signIn.status).toBe(500);
    expect(signIn.body).toEqual({ statusCode: 500, errorCode: 'UnhandledExceptionError', message: expect.any(String) });
    expect(JSON.stringify(signIn.body)).not.toMatch(/ECONNREFUSED|connect|127\.0\.0\.1/i);

    await proxy.start();
    const deadline = Date.now() + 15_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await t.http().get('/healthcheck')).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await t.http().get('/healthcheck').expect(200, { status: 'Healthy' });
  });
});
