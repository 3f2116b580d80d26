import { createServer, type Server, type Socket } from 'node:net';
import { type CreatedMembership, createMailhook, createMembership, eventually, loopbackSmtpProvider, queryEvents, unique, updateMembership, useInstallation } from '../support/api';
import { captureLog } from '../support/log-capture';
import { useMailCatcher } from '../support/mail-catcher';
import { scrapeMetrics } from '../support/operations';
import { useStarted } from '../support/use-started';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

/** Contract "Mail providers, mail hooks and the mail queue": capacity 10000, 4 in parallel. */
const CAPACITY = 10_000;
const CONCURRENCY = 4;
const RECIPIENTS_PER_HOOK = 50; // the most a mail hook takes
const HOOKS = 10;
const MESSAGES_PER_EVENT = HOOKS * RECIPIENTS_PER_HOOK;

/** An SMTP server that accepts connections and never greets: every message stays in flight. */
async function startSilentSmtpServer(): Promise<{ port: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the mail queue (queue="mail")', () => {
  const log = captureLog('info');
  // One attempt each, held open far longer than the test; shutdown does not wait for them.
  const suite = useInstallation({ env: { ...ALLOW_LOOPBACK_RECEIVERS, MAIL_TRY_COUNT: '1', MAIL_TIMEOUT_MS: '120000', SHUTDOWN_DRAIN_MS: '0' }, logger: log.logger });
  const catcher = useMailCatcher();
  const silent = useStarted('the silent SMTP server', startSilentSmtpServer, (server) => server.close());

  const scrape = async () => (await scrapeMetrics(suite.t)).metrics;
  const MAIL = { queue: 'mail' };

  /** A membership whose one mail provider (slug `catcher`) is on `port`. */
  async function tenantWithProvider(port: number): Promise<CreatedMembership> {
    const tenant = await createMembership(suite.t, suite.admin);
    await updateMembership(suite.t, tenant, { mail_providers: [loopbackSmtpProvider(port)] });
    return tenant;
  }

  async function createHook(tenant: CreatedMembership, recipients: { email_address: string }[]): Promise<string> {
    const hook = await createMailhook(suite.t, tenant.admin, {
      name: unique('Verified'),
      event: 'TokenVerified',
      mail_subject: 'Token verified for {{user.username}}',
      mail_template: '<p>{{user.email_address}}</p>',
      recipients,
    });
    return hook._id as string;
  }

  const verifyToken = async (tenant: CreatedMembership): Promise<void> => {
    expect((await suite.t.http().get('/verify-token').set('Authorization', tenant.admin.auth)).status).toBe(200);
  };

  it('shows capacity, depth, in-flight, dropped and processed of the mail queue, and counts the calls (kind="mail")', async () => {
    const before = await scrape();
    expect(before.value('portcullis_queue_capacity', MAIL)).toBe(CAPACITY);
    expect(before.value('portcullis_queue_depth', MAIL)).toBe(0);
    expect(before.value('portcullis_queue_in_flight', MAIL)).toBe(0);
    expect(before.value('portcullis_queue_dropped_total', MAIL)).toBe(0);
    expect(before.value('portcullis_queue_processed_total', MAIL)).toBe(0);
    expect(before.types.get('portcullis_queue_processed_total')).toBe('counter');

    const tenant = await tenantWithProvider(catcher.port);
    const address = `${unique('ops')}@example.com`;
    await createHook(tenant, [{ email_address: address }]);
    await verifyToken(tenant);
    await eventually(async () => catcher.mailsTo(address)[0], 'the mail', 15_000);
    // The worker finishes after the message: it records the result event first.
    const after = await eventually(async () => {
      const metrics = await scrape();
      return metrics.value('portcullis_queue_processed_total', MAIL) === 1 ? metrics : undefined;
    }, 'the processed message', 15_000);
    expect(after.value('portcullis_outgoing_http_requests_total', { kind: 'mail', outcome: 'success' })).toBe(1);
    expect(after.value('portcullis_outgoing_http_request_duration_seconds_count', { kind: 'mail', outcome: 'success' })).toBe(1);
    expect(after.value('portcullis_queue_depth', MAIL)).toBe(0);
    expect(after.value('portcullis_queue_dropped_total', MAIL)).toBe(0);
  });

  it('drops messages past the capacity and logs each with hook id and event id only (no address, no value)', async () => {
    const tenant = await tenantWithProvider(silent.port);
    const hookIds = new Set<string>();
    const addresses: string[] = [];
    for (let hook = 0; hook < HOOKS; hook++) {
      const recipients = Array.from({ length: RECIPIENTS_PER_HOOK }, () => ({ email_address: `${unique('queued')}@example.com` }));
      addresses.push(...recipients.map((recipient) => recipient.email_address));
      hookIds.add(await createHook(tenant, recipients));
    }
    const events = Math.ceil((CAPACITY + CONCURRENCY) / MESSAGES_PER_EVENT) + 1;
    const expectedDrops = events * MESSAGES_PER_EVENT - CAPACITY - CONCURRENCY;
    const droppedBefore = (await scrape()).value('portcullis_queue_dropped_total', MAIL);
    log.clear();
    for (let i = 0; i < events; i++) await verifyToken(tenant);

    const metrics = await eventually(async () => {
      const scraped = await scrape();
      return scraped.value('portcullis_queue_dropped_total', MAIL) - droppedBefore === expectedDrops ? scraped : undefined;
    }, `${expectedDrops} dropped messages`, 30_000);
    expect(metrics.value('portcullis_queue_depth', MAIL)).toBe(CAPACITY);
    expect(metrics.value('portcullis_queue_in_flight', MAIL)).toBe(CONCURRENCY);

    const verified = await queryEvents(suite.t, tenant.admin, { event_type: 'TokenVerified' }, { limit: '1000' });
    const eventIds = new Set(verified.map((event) => event._id as string));
    const dropLines = log.lines().filter((line) => line.msg === 'mail queue is full; the message was dropped');
    expect(dropLines).toHaveLength(expectedDrops);
    for (const line of dropLines) {
      expect(line.level).toBe(40); // warn
      expect(hookIds.has(line.mailhookId as string)).toBe(true);
      expect(eventIds.has(line.eventId as string)).toBe(true);
    }
    // Neither the recipients nor anything rendered for them: not in these lines, not anywhere in the log.
    const text = log.text();
    expect(text).not.toContain('@example.com');
    for (const address of addresses.slice(0, 100)) expect(text).not.toContain(address.split('@')[0]);
    expect(text).not.toContain(tenant.admin.username);
  });
});
