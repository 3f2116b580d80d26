import { sql } from 'drizzle-orm';
import { DATABASE, type Database } from '../../src/database/database';
import { ExpirySweeper } from '../../src/common/expiry-sweeper';
import {
  as,
  createApplicationWithPermissions,
  type CreatedMembership,
  createMembership,
  createUser,
  createWebhook,
  eventually,
  expectErrorBody,
  type Json,
  useInstallation,
  waitForResults,
  webhookBody,
  webhooksPath,
} from '../support/api';
import type { TestApp } from '../support/app';
import { ALLOW_LOOPBACK_RECEIVERS, WebhookReceiver } from '../support/webhook-receiver';

const RETRY_BASE_MS = 300;

const deliveriesPath = (hook: Json): string => `${webhooksPath(hook.membership_id as string)}/${hook._id as string}/deliveries`;

/** A webhook's deliveries as its list answers them, and the first with a status (waited for), on one suite's app. */
function deliveryReaders(app: () => TestApp) {
  async function deliveries(admin: CreatedMembership['admin'], hook: Json, query: Record<string, string> = {}): Promise<Json[]> {
    const res = await as(app(), admin).get(deliveriesPath(hook)).query(query);
    expect(res.status).toBe(200);
    return res.body.items;
  }
  async function deliveryWith(admin: CreatedMembership['admin'], hook: Json, status: string): Promise<Json> {
    return eventually(async () => (await deliveries(admin, hook)).find((d) => d.status === status), `a ${status} delivery`, 10_000);
  }
  return { deliveries, deliveryWith };
}

/**
 * Durable webhook delivery seen through the API (contract "Durable webhook delivery"): the
 * deliveries list and redelivery, X-Webhook-Delivery, backoff, cancel, a full queue. Runs on the
 * embedded database, and on the server with TEST_DATABASE_URL (webhook-durability covers crashes
 * and several instances there).
 */
describe('webhook deliveries', () => {
  const suite = useInstallation({ env: { ...ALLOW_LOOPBACK_RECEIVERS, WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS) } });
  let receiver: WebhookReceiver;
  beforeAll(async () => (receiver = await WebhookReceiver.start()));
  afterEach(() => receiver.reset());
  afterAll(async () => {
    await receiver?.close();
  });

  const tenant = (): Promise<CreatedMembership> => createMembership(suite.t, suite.admin);

  const { deliveries, deliveryWith } = deliveryReaders(() => suite.t);

  it('lists a delivery per call with its status, and sends its id as X-Webhook-Delivery', async () => {
    const { admin } = await tenant();
    const hook = await createWebhook(suite.t, admin, receiver.url('/list'));
    const user = await createUser(suite.t, admin);
    const [call] = await receiver.waitForRequests(1, { path: '/list' });
    const delivered = await deliveryWith(admin, hook, 'succeeded');
    expect(delivered).toEqual({
      _id: call.headers['x-webhook-delivery'],
      membership_id: admin.membershipId,
      webhook_id: hook._id,
      event_id: expect.any(String),
      status: 'succeeded',
      attempts: 1,
      next_attempt_at: expect.any(String),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      last_status: 200,
      last_error: null,
    });
    expect(call.json.document._id).toBe(user._id);
    const event = await as(suite.t, admin).get(`/memberships/${admin.membershipId}/events/${delivered.event_id}`).expect(200);
    expect(event.body.event_type).toBe('UserCreated');

    // where on status and event_id; the lease is not a field.
    const query = await as(suite.t, admin).post(`${deliveriesPath(hook)}/_query?with_count=true`, { where: { status: 'succeeded', event_id: delivered.event_id } });
    expect(query.status).toBe(200);
    expect(query.body).toMatchObject({ count: 1, items: [{ _id: delivered._id }] });
    const none = await as(suite.t, admin).post(`${deliveriesPath(hook)}/_query`, { where: { status: 'failed' } });
    expect(none.body.items).toEqual([]);
    expectErrorBody(await as(suite.t, admin).post(`${deliveriesPath(hook)}/_query`, { where: { lease_id: 'x' } }), 400, 'InvalidQuery');
    expectErrorBody(await as(suite.t, admin).get(deliveriesPath(hook)).query({ sort: 'attempts' }), 400, 'InvalidQuery');
    expectErrorBody(await as(suite.t, admin).get(deliveriesPath(hook)).query({ limit: '1001' }), 400, 'InvalidQuery');
  });

  it('redelivers with the same X-Webhook-Delivery, attempts from zero, 202', async () => {
    const { admin } = await tenant();
    const hook = await createWebhook(suite.t, admin, receiver.url('/again'));
    await createUser(suite.t, admin);
    const first = await deliveryWith(admin, hook, 'succeeded');

    const res = await as(suite.t, admin).post(`${deliveriesPath(hook)}/${first._id}/redeliver`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ _id: first._id, status: 'pending', attempts: 0 });
    const calls = await receiver.waitForRequests(2, { path: '/again' });
    expect(calls.map((call) => call.headers['x-webhook-delivery'])).toEqual([first._id, first._id]);
    await eventually(async () => ((await deliveries(admin, hook))[0].attempts === 1 ? true : undefined), 'the redelivery finished');
    await waitForResults(suite.t, admin, hook._id, 2);

    expectErrorBody(await as(suite.t, admin).post(`${deliveriesPath(hook)}/${'0'.repeat(24)}/redeliver`), 404, 'DeliveryNotFound');
    expectErrorBody(await as(suite.t, admin).get(`${webhooksPath(admin.membershipId)}/${'0'.repeat(24)}/deliveries`), 404, 'WebhookNotFound');
    expectErrorBody(await as(suite.t, admin).post(`${deliveriesPath(hook)}/${'x'.repeat(200)}/redeliver`), 404, 'NotFound');
  });

  it('asks webhooks.read.<id> to list and webhooks.update.<id> to redeliver; another membership sees nothing', async () => {
    const { admin } = await tenant();
    const hook = await createWebhook(suite.t, admin, receiver.url('/perm'));
    await createUser(suite.t, admin);
    const delivery = await deliveryWith(admin, hook, 'succeeded');
    const redeliver = `${deliveriesPath(hook)}/${delivery._id}/redeliver`;

    const reader = await createApplicationWithPermissions(suite.t, admin, [`webhooks.read.${hook._id}`]);
    await as(suite.t, reader).get(deliveriesPath(hook)).expect(200);
    expectErrorBody(await as(suite.t, reader).post(redeliver), 403, 'AccessDenied');
    const otherHookReader = await createApplicationWithPermissions(suite.t, admin, ['webhooks.read.someotherid', 'webhooks.update.someotherid']);
    expectErrorBody(await as(suite.t, otherHookReader).get(deliveriesPath(hook)), 403, 'AccessDenied');
    expectErrorBody(await as(suite.t, otherHookReader).post(redeliver), 403, 'AccessDenied');
    const updater = await createApplicationWithPermissions(suite.t, admin, [`webhooks.update.${hook._id}`]);
    await as(suite.t, updater).post(redeliver).expect(202);

    const other = await tenant();
    // The other tenant's admin, on its own membership's path with this webhook's id: not found.
    expectErrorBody(await as(suite.t, other.admin).get(`${webhooksPath(other.admin.membershipId)}/${hook._id}/deliveries`), 404, 'WebhookNotFound');
    expectErrorBody(await as(suite.t, other.admin).get(deliveriesPath(hook)), 403, 'AccessDenied');
  });

  it('retries with growing waits, the same X-Webhook-Delivery on every attempt, and stores the retry time', async () => {
    const { admin } = await tenant();
    // A receiver of its own: a late call of an earlier test must not take one of these scripted answers.
    const backoffReceiver = await WebhookReceiver.start();
    try {
      backoffReceiver.answer(500, 500, 500, 200);
      const hook = await createWebhook(suite.t, admin, backoffReceiver.url('/backoff'), { try_count: 4 });
      await createUser(suite.t, admin);
      const failedOnce = await deliveryWith(admin, hook, 'pending').then(() =>
        eventually(async () => (await deliveries(admin, hook)).find((d) => d.attempts === 1), 'one failed attempt'),
      );
      expect(failedOnce).toMatchObject({ status: 'pending', last_status: 500, last_error: 'The receiver answered HTTP 500' });
      const calls = await backoffReceiver.waitForRequests(4, { path: '/backoff', timeoutMs: 15_000 });
      expect(new Set(calls.map((call) => call.headers['x-webhook-delivery']))).toEqual(new Set([failedOnce._id]));
      const gaps = calls.slice(1).map((call, i) => call.receivedAt - calls[i].receivedAt);
      // base · 2^(n-1) ± 20%: at least 240, 480, 960 ms, each floor twice the one before (a fixed
      // wait would give about 300 each time). Only floors: a loaded machine delays a retry, never
      // hastens it, so comparing two measured gaps with each other would fail by chance.
      gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(RETRY_BASE_MS * 2 ** i * 0.8 - 20));
      const done = await deliveryWith(admin, hook, 'succeeded');
      expect(done).toMatchObject({ attempts: 4, last_status: 200 });
      const results = await waitForResults(suite.t, admin, hook._id, 4);
      expect(results.map((event) => [event.event_type, event.document.attempt])).toEqual([
        ['WebhookRequestFailed', 1],
        ['WebhookRequestFailed', 2],
        ['WebhookRequestFailed', 3],
        ['WebhookRequestSent', 4],
      ]);
    } finally {
      await backoffReceiver.close();
    }
  });

  it('sweeps finished deliveries after WEBHOOK_DELIVERY_RETENTION_DAYS and keeps pending ones', async () => {
    const { admin } = await tenant();
    const hook = await createWebhook(suite.t, admin, receiver.url('/sweep'));
    await createUser(suite.t, admin);
    const finished = await deliveryWith(admin, hook, 'succeeded');
    const database = suite.t.app.get<Database>(DATABASE);
    // Aged past the retention (7 days): one finished row, one pending row whose retry is far away.
    await database.db.execute(sql`update deliveries set updated_at = now() - interval '8 days' where id = ${finished._id}`);
    await database.db.execute(
      sql`insert into deliveries (id, membership_id, webhook_id, event_id, status, next_attempt_at, updated_at)
          values (${`${finished._id}-p`}, ${admin.membershipId}, ${hook._id}, ${finished.event_id}, 'pending', now() + interval '1 day', now() - interval '8 days')`,
    );
    await suite.t.app.get(ExpirySweeper).sweep();
    const left = await deliveries(admin, hook);
    expect(left.map((d) => d._id)).toEqual([`${finished._id}-p`]);
  });
});

/**
 * Canceling, on an installation of its own: between the first failed attempt and the next one the
 * test must see that attempt stored and commit a PUT and a DELETE, which the 240-360 ms of the
 * suite above's retry base do not always leave on a loaded machine.
 */
describe('webhook deliveries canceled', () => {
  const CANCEL_RETRY_BASE_MS = 3000;
  const suite = useInstallation({ env: { ...ALLOW_LOOPBACK_RECEIVERS, WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_RETRY_BASE_MS: String(CANCEL_RETRY_BASE_MS) } });
  let receiver: WebhookReceiver;
  beforeAll(async () => (receiver = await WebhookReceiver.start()));
  afterAll(async () => {
    await receiver?.close();
  });

  const { deliveries, deliveryWith } = deliveryReaders(() => suite.t);
  const failedOnce = (admin: CreatedMembership['admin'], hook: Json): Promise<Json> =>
    eventually(async () => (await deliveries(admin, hook)).find((d) => d.attempts === 1 && d.status === 'pending'), 'one failed attempt stored');

  it('cancels the pending deliveries of a webhook made passive, and of a deleted one', async () => {
    const { admin } = await createMembership(suite.t, suite.admin);
    receiver.answer(500);
    const passive = await createWebhook(suite.t, admin, receiver.url('/passive'), { try_count: 5 });
    const deleted = await createWebhook(suite.t, admin, receiver.url('/deleted'), { try_count: 5 });
    await createUser(suite.t, admin);
    // The first attempts failed and are stored (a cancel while one is in flight would drop its result).
    await failedOnce(admin, passive);
    await failedOnce(admin, deleted);

    const passiveBody = webhookBody(receiver.url('/passive'), { name: passive.name, try_count: 5, status: 'passive' });
    await as(suite.t, admin).put(`${webhooksPath(admin.membershipId)}/${passive._id}`, passiveBody).expect(200);
    await as(suite.t, admin).del(`${webhooksPath(admin.membershipId)}/${deleted._id}`).expect(204);
    const canceled = await deliveryWith(admin, passive, 'canceled');
    expect(canceled.attempts).toBe(1);
    const database = suite.t.app.get<Database>(DATABASE);
    const result: unknown = await database.db.execute(sql`select status from deliveries where webhook_id = ${deleted._id}`);
    expect((result as { rows: { status: string }[] }).rows).toEqual([{ status: 'canceled' }]);
    // The second attempts were due 2.4-3.6 s after the first ones: none comes.
    await new Promise((resolve) => setTimeout(resolve, CANCEL_RETRY_BASE_MS * 1.2 + 500));
    expect(receiver.received('/passive')).toHaveLength(1);
    expect(receiver.received('/deleted')).toHaveLength(1);
  });
});

describe('webhook deliveries with a full queue', () => {
  const suite = useInstallation({ env: { ...ALLOW_LOOPBACK_RECEIVERS, WEBHOOK_QUEUE_CAPACITY: '1' } });
  let receiver: WebhookReceiver;
  beforeAll(async () => (receiver = await WebhookReceiver.start()));
  afterAll(async () => {
    await receiver?.close();
  });

  it('loses nothing: what the queue cannot hold stays pending and is delivered later, nothing dropped', async () => {
    const { admin } = await createMembership(suite.t, suite.admin);
    receiver.answerAfter(200);
    await createWebhook(suite.t, admin, receiver.url('/full'));
    const users = await Promise.all(Array.from({ length: 40 }, () => createUser(suite.t, admin)));
    const calls = await receiver.waitForRequests(40, { path: '/full', timeoutMs: 30_000 });
    expect(new Set(calls.map((call) => call.json.document._id))).toEqual(new Set(users.map((user) => user._id)));
    // The last results are stored just after their calls: the backlog reaches 0 a moment later.
    const metrics = await eventually(async () => {
      const res = await suite.t.http().get('/metrics').expect(200);
      return /portcullis_durable_queue_pending\{queue="webhooks"\} 0/.test(res.text) ? res : undefined;
    }, 'no pending delivery');
    expect(metrics.text).toMatch(/portcullis_queue_dropped_total\{queue="webhooks"\} 0/);
    expect(metrics.text).toMatch(/portcullis_queue_capacity\{queue="webhooks"\} 1/);
    expect(metrics.text).toMatch(/portcullis_durable_queue_attempts_total\{queue="webhooks",outcome="success"\} 40/);
    expect(metrics.text).toMatch(/portcullis_durable_queue_pending\{queue="webhooks"\} 0/);
    expect(metrics.text).toMatch(/portcullis_durable_queue_oldest_pending_seconds\{queue="webhooks"\} 0/);
  });
});

/**
 * A delivery claimed into this instance's queue while 8 calls are in flight waits there with the
 * webhook as it was at the claim. Deleting the webhook (or making it passive) meanwhile must stop
 * it: the contract's "a passive or deleted webhook cancels its pending deliveries".
 */
describe('webhook deliveries queued in memory', () => {
  const suite = useInstallation({ env: { ...ALLOW_LOOPBACK_RECEIVERS, WEBHOOK_TIMEOUT_MS: '5000' } });
  let receiver: WebhookReceiver;
  beforeAll(async () => (receiver = await WebhookReceiver.start()));
  afterAll(async () => {
    await receiver?.close();
  });

  for (const change of ['deleted', 'made passive'] as const) {
    it(`sends nothing for a queued delivery of a webhook ${change} while it waited`, async () => {
      receiver.reset();
      const { admin } = await createMembership(suite.t, suite.admin);
      receiver.answerAfter(1500);
      const path = change === 'deleted' ? '/queued-deleted' : '/queued-passive';
      const hook = await createWebhook(suite.t, admin, receiver.url(path));
      // 8 calls in flight (the queue's concurrency), held back by the receiver; the 9th and 10th wait in the queue.
      for (let i = 0; i < 10; i++) await createUser(suite.t, admin);
      await receiver.waitForRequests(8, { path, timeoutMs: 5000 });
      const hookPath = `${webhooksPath(admin.membershipId)}/${hook._id as string}`;
      if (change === 'deleted') await as(suite.t, admin).del(hookPath).expect(204);
      else await as(suite.t, admin).put(hookPath, webhookBody(receiver.url(path), { name: hook.name, status: 'passive' })).expect(200);
      // The 8 answers come 1.5 s after their calls; queued calls would go out then.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      expect(receiver.received(path).length).toBe(8);
    });
  }
});
