import { Client } from 'pg';
import request from 'supertest';
import { startTestApp, TEST_SETUP_TOKEN, type TestApp } from '../support/app';
import { createWebhook, eventually, type Installation, type SignedIn, setupInstallation, unique, usersPath } from '../support/api';
import { createServerDatabase, serverUrl } from '../support/database';
import { startServiceProcess } from '../support/process';
import { ALLOW_LOOPBACK_RECEIVERS, type ReceivedRequest, WebhookReceiver } from '../support/webhook-receiver';

/*
 * Durable webhook delivery (contract "Durable webhook delivery") across processes and instances:
 * a kill -9 while calls are in flight, two instances sharing the work, a graceful stop that leaves
 * the rest pending. Needs a PostgreSQL server (TEST_DATABASE_URL): the database must outlive the
 * service.
 */
const server = serverUrl();
const describeWithServer = server ? describe : describe.skip;
if (!server) process.stdout.write('webhook-durability.e2e-spec: skipped; set TEST_DATABASE_URL to a PostgreSQL server to run it\n');

const EVENTS = 200;
const PASSWORD = 'correct horse battery';

/** Creates `count` users, `parallel` at a time; answers their ids. */
async function createUsers(t: Pick<TestApp, 'http'>, admin: SignedIn, count: number, parallel = 10): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += parallel) {
    const batch = Array.from({ length: Math.min(parallel, count - start) }, async () => {
      const username = unique('u');
      const res = await t
        .http()
        .post(usersPath(admin.membershipId))
        .set('Authorization', admin.auth)
        .send({ username, email_address: `${username}@example.com`, password: PASSWORD });
      if (res.status !== 201) throw new Error(`user create failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body._id as string;
    });
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

/** The delivery ids each user's UserCreated call carried, by user id. */
function deliveryIdsByUser(requests: readonly ReceivedRequest[]): Map<string, Set<string>> {
  const byUser = new Map<string, Set<string>>();
  for (const received of requests) {
    const userId = received.json?.document?._id as string;
    const ids = byUser.get(userId) ?? new Set<string>();
    ids.add(String(received.headers['x-webhook-delivery']));
    byUser.set(userId, ids);
  }
  return byUser;
}

async function pendingRows(databaseUrl: string): Promise<{ status: string; leased: boolean }[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ status: string; leased: boolean }>('select status, lease_id is not null as leased from deliveries');
    return rows;
  } finally {
    await client.end();
  }
}

describeWithServer('durable webhook delivery on a shared database', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => (receiver = await WebhookReceiver.start()));
  afterEach(() => receiver.reset());
  afterAll(async () => {
    await receiver?.close();
  });

  it('a kill -9 while calls are in flight loses none of 200 events; a repeated call carries its delivery id again', async () => {
    const database = await createServerDatabase(server!);
    const env = {
      ...ALLOW_LOOPBACK_RECEIVERS,
      DATABASE_URL: database.url,
      SETUP_TOKEN: TEST_SETUP_TOKEN,
      LOG_LEVEL: 'info',
      WEBHOOK_TIMEOUT_MS: '8000',
      // Short (but longer than an attempt), so the restarted service claims the killed one's deliveries within the test.
      WEBHOOK_LEASE_SECONDS: '9',
    };
    const listening = (entry: Record<string, unknown>) => typeof entry.url === 'string' && typeof entry.database === 'string';
    const first = startServiceProcess(env);
    let second: ReturnType<typeof startServiceProcess> | undefined;
    try {
      const url = (await first.waitForLog(listening)).url as string;
      const t = { http: () => request(url) } as unknown as TestApp;
      const install = await setupInstallation(t);
      // A slow receiver: 8 calls at a time, each answered after 5 s (1.6 a second), so most calls are still owed when the users are all created.
      receiver.answerAfter(5000);
      await createWebhook(t, install.admin, receiver.url('/crash'));
      const userIds = await createUsers(t, install.admin, EVENTS);
      await eventually(async () => (receiver.received('/crash').length >= 24 && receiver.answersHeldBack > 0 ? true : undefined), 'calls in flight', 30_000);
      const inFlight = receiver.answersHeldBack;
      const before = receiver.received('/crash').length;
      first.child.kill('SIGKILL');
      await first.exited;
      process.stdout.write(`webhook crash test: killed with SIGKILL; ${before} calls received, ${inFlight} of them in flight (unanswered) at the kill\n`);
      expect(inFlight).toBeGreaterThan(0);
      expect(before).toBeLessThan(EVENTS);

      receiver.answerAfter(0);
      second = startServiceProcess(env);
      await second.waitForLog(listening);
      await eventually(
        async () => {
          const seen = deliveryIdsByUser(receiver.received('/crash'));
          return userIds.every((id) => seen.has(id)) ? true : undefined;
        },
        `all ${EVENTS} users' calls after the restart`,
        60_000,
      );
      // The calls cut by the kill are made again once their leases end: wait for every delivery to finish.
      await eventually(
        async () => ((await pendingRows(database.url)).every((row) => row.status === 'succeeded') ? true : undefined),
        'every delivery succeeded',
        60_000,
      );
      const received = receiver.received('/crash');
      const byUser = deliveryIdsByUser(received);
      // Every event reached the receiver; a user seen twice was the same delivery both times.
      expect(userIds.filter((id) => !byUser.has(id))).toEqual([]);
      expect([...byUser.values()].filter((ids) => ids.size !== 1)).toEqual([]);
      // At least the calls in flight at the kill were made twice.
      expect(received.length - EVENTS).toBeGreaterThanOrEqual(inFlight);
      process.stdout.write(`webhook crash test: ${received.length} calls for ${EVENTS} events (${received.length - EVENTS} repeated)\n`);
    } finally {
      first.child.kill('SIGKILL');
      await second?.stop();
      await database.drop();
    }
  }, 240_000);

  it('two instances on one database attempt each of 200 deliveries exactly once', async () => {
    const database = await createServerDatabase(server!);
    const env = { ...ALLOW_LOOPBACK_RECEIVERS };
    const a = await startTestApp({ env, databaseUrl: database.url });
    const b = await startTestApp({ env, databaseUrl: database.url });
    try {
      const install: Installation = await setupInstallation(a);
      await createWebhook(a, install.admin, receiver.url('/pair'));
      // Half the events on each instance: each wakes its own claims, and the other's timer competes for them.
      const created = await Promise.all([createUsers(a, install.admin, EVENTS / 2, 5), createUsers(b, install.admin, EVENTS / 2, 5)]);
      const userIds = created.flat();
      await receiver.waitForRequests(EVENTS, { path: '/pair', timeoutMs: 30_000 });
      // Two claim intervals more: any second attempt would have arrived by then.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const received = receiver.received('/pair');
      expect(received).toHaveLength(EVENTS);
      const byUser = deliveryIdsByUser(received);
      expect(userIds.every((id) => byUser.get(id)?.size === 1)).toBe(true);
      expect(new Set(received.map((r) => r.headers['x-webhook-delivery'])).size).toBe(EVENTS);
      const rows = await pendingRows(database.url);
      expect(rows.filter((row) => row.status !== 'succeeded')).toEqual([]);
    } finally {
      await b.close();
      await a.close();
      await database.drop();
    }
  }, 180_000);

  it('an instance with WEBHOOK_DISPATCH=off makes no call; a dispatching one, woken by its NOTIFY, makes each once', async () => {
    const database = await createServerDatabase(server!);
    const api = await startTestApp({ env: { ...ALLOW_LOOPBACK_RECEIVERS, WEBHOOK_DISPATCH: 'off' }, databaseUrl: database.url });
    // Its claim timer (10 minutes) cannot find the deliveries within the test: only the notification can wake it.
    const dispatcher = await startTestApp({ env: { ...ALLOW_LOOPBACK_RECEIVERS, WEBHOOK_CLAIM_INTERVAL_MS: '600000' }, databaseUrl: database.url });
    try {
      const install = await setupInstallation(api);
      await createWebhook(api, install.admin, receiver.url('/split'));
      const userIds = await createUsers(api, install.admin, 50, 5);
      await receiver.waitForRequests(50, { path: '/split', timeoutMs: 30_000 });
      const byUser = deliveryIdsByUser(receiver.received('/split'));
      expect(userIds.every((id) => byUser.get(id)?.size === 1)).toBe(true);
      const attempts = async (t: TestApp) =>
        (await t.http().get('/metrics')).text
          .split('\n')
          .filter((line) => line.startsWith('portcullis_durable_queue_attempts_total{') && line.includes('queue="webhooks"'))
          .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
      expect(await attempts(api)).toBe(0);
      expect(await attempts(dispatcher)).toBeGreaterThanOrEqual(50);
      await eventually(async () => ((await pendingRows(database.url)).every((row) => row.status === 'succeeded') ? true : undefined), 'every delivery succeeded');
    } finally {
      await dispatcher.close();
      await api.close();
      await database.drop();
    }
  }, 120_000);

  it('a graceful stop finishes the calls in flight and leaves the rest pending, unleased, for the next start', async () => {
    const database = await createServerDatabase(server!);
    const env = { ...ALLOW_LOOPBACK_RECEIVERS, SHUTDOWN_DRAIN_MS: '3000' };
    const a = await startTestApp({ env, databaseUrl: database.url });
    let b: TestApp | undefined;
    try {
      const install = await setupInstallation(a);
      receiver.answerAfter(1000);
      await createWebhook(a, install.admin, receiver.url('/stop'));
      const userIds = await createUsers(a, install.admin, 30);
      await eventually(async () => (receiver.answersHeldBack > 0 ? true : undefined), 'calls in flight');
      await a.close();
      // Nothing was cut: every call that started was answered within the stop deadline and recorded.
      const started = receiver.received('/stop').length;
      const rows = await pendingRows(database.url);
      expect(rows.filter((row) => row.status === 'succeeded')).toHaveLength(started);
      expect(rows.filter((row) => row.status === 'pending')).toHaveLength(30 - started);
      expect(rows.filter((row) => row.leased)).toEqual([]);

      receiver.answerAfter(0);
      b = await startTestApp({ env, databaseUrl: database.url });
      await receiver.waitForRequests(30, { path: '/stop', timeoutMs: 15_000 });
      expect(deliveryIdsByUser(receiver.received('/stop')).size).toBe(userIds.length);
    } finally {
      await b?.close();
      await a.close();
      await database.drop();
    }
  }, 120_000);
});
