import { connect, type Socket } from 'node:net';
import request from 'supertest';
import { eventually, webhookBody, webhooksPath } from '../support/api';
import { TEST_SETUP_TOKEN } from '../support/app';
import { openEventStream, streamPath } from '../support/event-stream';
import { buildServiceIntoTemp, type RunningService, scrapeMetrics, startReceiver, startService } from '../support/operations';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

// server pass: none. Every service here is the built service as a process on its own embedded
// database (memory://), whatever TEST_DATABASE_URL says: CI's second pass, on the PostgreSQL
// server, would run the very same tests again, and leaves this file out (.ci/run).

/** Opens a connection and sends a sign-in request whose body is still on its way. */
function stalledRequest(url: string): { socket: Socket; finish: () => void; response: Promise<string> } {
  const { port } = new URL(url);
  const body = JSON.stringify({ username: 'nobody', password: 'no password at all' });
  const socket = connect(Number(port), '127.0.0.1');
  socket.write(
    'POST /generate-token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
      `X-Service-Alias: no-such-membership\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
  );
  const response = new Promise<string>((resolve) => {
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('close', () => resolve(text));
    socket.on('error', () => undefined);
  });
  return { socket, finish: () => socket.write(body.slice(10)), response };
}

/** POST /setup on a started service, and its admin signed in: the membership id and the admin's Authorization. */
async function setUpSignedIn(url: string, membershipName: string, username: string): Promise<{ membershipId: string; auth: string }> {
  const password = 'long enough pw';
  const setup = await request(url)
    .post('/setup')
    .set('X-Setup-Token', TEST_SETUP_TOKEN)
    .send({ membership: { name: membershipName }, user: { username, email_address: `${username}@example.com`, password } });
  expect(setup.status).toBe(201);
  const membershipId = setup.body.membership._id as string;
  const signIn = await request(url).post('/generate-token').set('X-Service-Alias', membershipId).send({ username, password }).expect(201);
  return { membershipId, auth: `Bearer ${signIn.body.access_token}` };
}

/** Until the service's own metrics show the stalled request in flight (so a signal surely finds it). */
async function untilInFlight(service: RunningService): Promise<void> {
  await eventually(
    async () => ((await scrapeMetrics(service)).metrics.value('portcullis_http_requests_in_progress', { method: 'POST', route: 'unmatched' }) === 1 ? true : undefined),
    'the stalled request in flight',
    10_000,
  );
}

const message = (text: string) => (entry: Record<string, unknown>) => typeof entry.msg === 'string' && entry.msg.startsWith(text);

describe('graceful shutdown of the built service (node dist/main.js)', () => {
  let build: { main: string; remove: () => void };
  const running: RunningService[] = [];
  const start = async (env: Record<string, string>) => {
    const service = await startService(build.main, {
      DATABASE_URL: 'memory://',
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
      SETUP_TOKEN: TEST_SETUP_TOKEN,
      ...ALLOW_LOOPBACK_RECEIVERS,
      ...env,
    });
    running.push(service);
    return service;
  };

  beforeAll(async () => {
    build = await buildServiceIntoTemp();
  });
  afterAll(() => {
    for (const service of running) service.kill('SIGKILL');
    build?.remove();
  });

  it('on SIGTERM refuses new connections, finishes the request in flight, closes modules in order and exits 0', async () => {
    const service = await start({ SHUTDOWN_DRAIN_MS: '20000' });
    const stalled = stalledRequest(service.url);
    await untilInFlight(service);

    service.kill('SIGTERM');
    const stopping = await service.waitForLog(message('shutdown: no longer accepting'));
    expect(stopping).toMatchObject({ signal: 'SIGTERM', inFlightRequests: 1, drainMs: 20000 });
    // Refused, or reset when libuv had not yet closed the listening socket: never answered.
    await expect(request(service.url).get('/ping')).rejects.toThrow(/ECONNREFUSED|ECONNRESET/);

    stalled.finish();
    const answer = await stalled.response;
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer).toContain('"errorCode":"MembershipNotFound"');

    expect(await service.exited).toEqual({ code: 0, signal: null });
    const order = [
      message('shutdown: no longer accepting'),
      (entry: Record<string, unknown>) => entry.msg === 'request' && entry.route === '/generate-token' && entry.status === 404,
      message('shutdown: HTTP server closed'),
      (entry: Record<string, unknown>) => entry.queue === 'webhooks' && typeof entry.lost === 'number',
      message('shutdown complete'),
    ].map((predicate) => service.entries().findIndex(predicate));
    if (order.some((index) => index < 0) || order.some((index, i) => i > 0 && index < order[i - 1])) {
      throw new Error(`log lines missing or out of order (${order.join(', ')}):\n${service.lines.join('\n')}`);
    }
    expect(service.entries().find(message('shutdown complete'))).toMatchObject({ requestsLost: 0 });
  });

  it('on SIGTERM ends open event streams at once: they hold neither the drain nor the exit up', async () => {
    const service = await start({ SHUTDOWN_DRAIN_MS: '20000' });
    const { membershipId, auth } = await setUpSignedIn(service.url, 'Streams', 'streamer');
    const answer = await openEventStream(service.url, streamPath(membershipId), auth);
    const stream = answer.stream!;

    const signalled = Date.now();
    service.kill('SIGTERM');
    await stream.until(() => stream.ended, 'the stream to end on SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(10_000);
    expect(service.entries().find(message('shutdown complete'))).toMatchObject({ requestsLost: 0 });
  });

  it('at the drain deadline cuts off requests still in flight and counts lost webhook calls, then exits 0', async () => {
    const receiver = await startReceiver({ hold: true });
    try {
      const service = await start({ SHUTDOWN_DRAIN_MS: '500' });
      const { membershipId, auth } = await setUpSignedIn(service.url, 'Drain', 'drainer');
      await request(service.url).post(webhooksPath(membershipId)).set('Authorization', auth).send(webhookBody(receiver.url, { event: 'TokenVerified' })).expect(201);
      for (let i = 0; i < 3; i++) await request(service.url).get('/verify-token').set('Authorization', auth).expect(200);
      // The receiver holds all three calls: they are in flight when the signal comes.
      await receiver.waitForRequests(3);
      const stalled = stalledRequest(service.url);
      await untilInFlight(service);

      service.kill('SIGTERM');
      // Neither the held webhook calls nor the stalled request ever finish: only the drain
      // deadlines (requests, then queues) can have let the process exit, unanswered.
      expect(await service.exited).toEqual({ code: 0, signal: null });
      expect(await stalled.response).toBe('');
      expect(service.entries().find(message('shutdown: requests still in flight'))).toMatchObject({ requestsLost: 1 });
      expect(service.entries().find(message('shutdown: HTTP server closed'))).toMatchObject({ queues: [{ name: 'webhooks', pending: 3 }, { name: 'mail', pending: 0 }] });
      expect(service.entries().find((entry) => entry.queue === 'webhooks' && typeof entry.lost === 'number')).toMatchObject({ lost: 3 });
      expect(service.entries().find(message('shutdown complete'))).toMatchObject({ requestsLost: 1 });
    } finally {
      await receiver.close();
    }
  });

  it('exits at once with 1 on a second signal', async () => {
    const service = await start({ SHUTDOWN_DRAIN_MS: '30000' });
    const stalled = stalledRequest(service.url);
    await untilInFlight(service);
    service.kill('SIGINT');
    await service.waitForLog(message('shutdown: no longer accepting'));
    service.kill('SIGTERM');
    // The stalled request never finishes and the drain lasts 30 s: an exit with 1, the request
    // cut off unanswered and no completed shutdown mean the second signal did not wait for it.
    expect(await service.exited).toEqual({ code: 1, signal: null });
    expect(await stalled.response).toBe('');
    expect(service.entries().find(message('shutdown: second signal'))).toMatchObject({ signal: 'SIGTERM', inFlightRequests: 1 });
    expect(service.entries().some(message('shutdown complete'))).toBe(false);
  });
});
