/**
 * Bounded webhook rendering and masked webhook configuration events (contract "Bounded work and
 * per-object rules": Rendered templates, Secrets in webhook URLs). Receivers are real HTTP servers
 * on 127.0.0.1.
 */
import { WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher';
import { startTestApp, type TestApp } from '../support/app';
import { type CreatedMembership, createMembership, createUser, createUserType, createWebhook, type Json, queryEvents, setupInstallation, type SignedIn, unique, waitForResults, webhooksPath } from '../support/api';
import { WebhookReceiver } from '../support/webhook-receiver';

const BODY_LIMIT = 1024 * 1024;
const URL_AND_HEADERS_LIMIT = 64 * 1024;
/** A custom string field at its maximum length (CUSTOM_FIELD_LIMITS.maxStringLength). */
const NOTES = 'n'.repeat(4096);
const NOTES_PLACEHOLDER = '{{document.notes}}';

describe('webhook limits', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let systemAdmin: SignedIn;

  beforeAll(async () => {
    // OUTBOUND_ALLOW (contract "Outbound calls"): the receivers are on loopback, which the outbound
    // policy refuses unless allowed; a service without that policy ignores the variable.
    t = await startTestApp({ env: { WEBHOOK_TIMEOUT_MS: '5000', OUTBOUND_ALLOW: '127.0.0.1/32,::1/128' } });
    receiver = await WebhookReceiver.start();
    systemAdmin = (await setupInstallation(t)).admin;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  /** A membership of its own with a user type carrying a long custom string field `notes`. */
  async function tenant(): Promise<CreatedMembership & { userType: string }> {
    const created = await createMembership(t, systemAdmin);
    const type = await createUserType(t, created.admin, { properties: { notes: { type: 'string' } } });
    return { ...created, userType: type.slug };
  }

  const path = (): string => `/${unique('p')}`;

  /**
   * Waits for the webhook's first result event, then until the webhook queue is idle: the call
   * that recorded it has finished, so every attempt it was going to make is recorded.
   */
  async function resultsAfterTheCall(admin: SignedIn, hookId: string): Promise<Json[]> {
    await waitForResults(t, admin, hookId, 1, 10_000);
    await t.app.get(WebhookDispatcher).queue.onIdle();
    return waitForResults(t, admin, hookId, 1);
  }

  describe('rendered output', () => {
    it('fails the attempt with the template error when the body would render past 1 MiB; nothing is sent, nothing retried', async () => {
      const { admin, userType } = await tenant();
      const p = path();
      // 1000 placeholders (the template limit) of a 4 KiB field: a 19 KB template renders 4 MB.
      const hook = await createWebhook(t, admin, receiver.url(p), {
        try_count: 5,
        request: { body: { blob: NOTES_PLACEHOLDER.repeat(1000) } },
      });
      await createUser(t, admin, { user_type: userType, notes: NOTES });

      const results = await resultsAfterTheCall(admin, hook._id);
      expect(results).toHaveLength(1);
      const [failed] = results;
      expect(failed.event_type).toBe('WebhookRequestFailed');
      expect(failed.document).toMatchObject({ webhook_id: hook._id, attempt: 1, response: null, error_code: 'TemplateOutputTooLarge' });
      expect(failed.document.error).toMatch(/nothing was sent/);
      expect(failed.document.error).toContain(`${BODY_LIMIT} bytes`);
      expect(receiver.received(p)).toHaveLength(0);
    });

    it('delivers a body of exactly 1 MiB', async () => {
      const { admin, userType } = await tenant();
      const p = path();
      const envelope = Buffer.byteLength(JSON.stringify({ blob: '' }));
      const copies = Math.floor((BODY_LIMIT - envelope) / NOTES.length);
      const padding = 'p'.repeat(BODY_LIMIT - envelope - copies * NOTES.length);
      const hook = await createWebhook(t, admin, receiver.url(p), {
        request: { uncoveredBody: true, body: { blob: NOTES_PLACEHOLDER.repeat(copies) + padding } },
      });
      await createUser(t, admin, { user_type: userType, notes: NOTES });

      const [sent] = await resultsAfterTheCall(admin, hook._id);
      expect(sent.event_type).toBe('WebhookRequestSent');
      const [request] = receiver.received(p);
      expect(Buffer.byteLength(request.body)).toBe(BODY_LIMIT);
      expect(request.json.blob).toBe(NOTES.repeat(copies) + padding);
    });

    it('bounds URL and headers together at 64 KiB: each under it alone, over it together fails without a request', async () => {
      const { admin, userType } = await tenant();
      const p = path();
      // About 40 KiB of URL and 28 KiB of header value: each is under the limit, together they are not.
      const hook = await createWebhook(t, admin, `${receiver.url(p)}?a=${NOTES_PLACEHOLDER.repeat(10)}`, {
        try_count: 3,
        request: { headers: { 'X-Notes': NOTES_PLACEHOLDER.repeat(7) } },
      });
      await createUser(t, admin, { user_type: userType, notes: NOTES });

      const results = await resultsAfterTheCall(admin, hook._id);
      expect(results).toHaveLength(1);
      expect(results[0].event_type).toBe('WebhookRequestFailed');
      expect(results[0].document).toMatchObject({ attempt: 1, response: null, error_code: 'TemplateOutputTooLarge' });
      expect(results[0].document.error).toContain(`${URL_AND_HEADERS_LIMIT} bytes`);
      expect(receiver.received(p)).toHaveLength(0);
    });
  });

  describe('configuration events', () => {
    const credentialUrl = 'https://user:pass@receiver.example.com/path?token=abc';
    const clearText = ['user:pass', 'pass@', 'token=abc', 'receiver-credential'];

    function expectMasked(request: Json): void {
      expect(request.url).toBe('https://masked:masked@receiver.example.com/path?token=%5Bmasked%5D');
      expect(request.headers).toEqual({ Authorization: '[masked]', 'X-Event': '{{event_type}}' });
      for (const text of clearText) expect(JSON.stringify(request)).not.toContain(text);
    }

    it('WebhookCreated, WebhookUpdated and WebhookDeleted mask URL userinfo, query values and credential headers; GET shows them', async () => {
      const { admin } = await tenant();
      const headers = { Authorization: 'Bearer receiver-credential', 'X-Event': '{{event_type}}' };
      // Passive: nothing is called; only the configuration events matter here.
      const hook = await createWebhook(t, admin, credentialUrl, { status: 'passive', request: { headers } });
      const hookPath = `${webhooksPath(admin.membershipId)}/${hook._id}`;

      const get = await t.http().get(hookPath).set('Authorization', admin.auth);
      expect(get.status).toBe(200);
      expect(get.body.request).toMatchObject({ url: credentialUrl, headers });

      const [created] = await queryEvents(t, admin, { event_type: 'WebhookCreated', 'document._id': hook._id });
      expectMasked(created.document.request);

      const put = await t
        .http()
        .put(hookPath)
        .set('Authorization', admin.auth)
        .send({ name: hook.name, event: hook.event, status: 'passive', try_count: 2, request: { method: 'POST', url: credentialUrl, headers } });
      expect(put.status).toBe(200);
      expect(put.body.request).toMatchObject({ url: credentialUrl, headers });
      const [updated] = await queryEvents(t, admin, { event_type: 'WebhookUpdated', 'document._id': hook._id });
      expectMasked(updated.document.request);
      expectMasked(updated.prior.request);

      expect((await t.http().delete(hookPath).set('Authorization', admin.auth)).status).toBe(204);
      const [deleted] = await queryEvents(t, admin, { event_type: 'WebhookDeleted', 'prior._id': hook._id });
      expectMasked(deleted.prior.request);
    });

    it('the bulk delete masks the WebhookDeleted prior too', async () => {
      const { admin } = await tenant();
      const hook = await createWebhook(t, admin, credentialUrl, { status: 'passive', request: { headers: { Authorization: 'Bearer receiver-credential', 'X-Event': '{{event_type}}' } } });
      const res = await t.http().delete(webhooksPath(admin.membershipId)).set('Authorization', admin.auth).send({ ids: [hook._id] });
      expect(res.status).toBe(200);
      const [deleted] = await queryEvents(t, admin, { event_type: 'WebhookDeleted', 'prior._id': hook._id });
      expectMasked(deleted.prior.request);
    });
  });
});
