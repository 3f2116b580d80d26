import { verifyWebhookSignature } from '../../src/webhooks/signature';
import { type CreatedMembership, createMembership, createUser, createWebhook, eventsPath, eventually, queryEvents, unique, useInstallation, waitForResults, webhooksPath } from '../support/api';
import { ALLOW_LOOPBACK_RECEIVERS, WebhookReceiver } from '../support/webhook-receiver';

const TIMEOUT_MS = 500;

/** Webhooks: delivery to a real receiver on 127.0.0.1 (placeholders, retries, timeouts, signatures, result events). (Split by behaviour; see also webhooks-api.e2e-spec.ts.) */
describe('webhooks', () => {
  const suite = useInstallation({ env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), ...ALLOW_LOOPBACK_RECEIVERS } });
  let receiver: WebhookReceiver;
  beforeAll(async () => (receiver = await WebhookReceiver.start()));
  afterAll(async () => {
    await receiver?.close();
  });

  /** Every test works in a membership of its own, so webhooks of one test never see another's events. */
  async function tenant(): Promise<CreatedMembership> {
    return createMembership(suite.t, suite.admin);
  }

  const path = (): string => `/${unique('p')}`;

  describe('delivery', () => {
    it('substitutes placeholders in URL, headers and body and sends {document, prior, payload}', async () => {
      const { admin } = await tenant();
      const p = path();
      const hook = await createWebhook(suite.t, admin, receiver.url(`${p}/{{event_type}}/{{document._id}}?by={{utilizer_id}}&m={{membership_id}}&name={{document.firstname}}`), {
        request: {
          headers: { 'X-Event': '{{event_type}}', 'X-User': '{{document.username}}', 'X-Created-By': '{{document.sys.created_by}}' },
          body: { greeting: 'Hello {{document.firstname}} {{document.lastname}}', nested: { at: '{{event_time}}', list: ['{{document.email_address}}', 7] }, fixed: true },
        },
      });
      const user = await createUser(suite.t, admin, { firstname: 'Ada & Co/?', lastname: 'Lovelace' });
      const [request] = await receiver.waitForRequests(1, { path: `${p}/UserCreated/${user._id}` });

      expect(request.method).toBe('POST');
      const url = new URL(request.url, 'http://x');
      expect(url.searchParams.get('by')).toBe(admin.userId);
      expect(url.searchParams.get('m')).toBe(admin.membershipId);
      expect(url.searchParams.get('name')).toBe('Ada & Co/?');
      expect(request.url).toContain('name=Ada%20%26%20Co%2F%3F');
      expect(request.headers['x-event']).toBe('UserCreated');
      expect(request.headers['x-user']).toBe(user.username);
      expect(request.headers['x-created-by']).toBe(admin.userId);
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-webhook-signature']).toBeUndefined();

      expect(Object.keys(request.json).sort()).toEqual(['document', 'payload', 'prior']);
      expect(request.json.document).toMatchObject({ _id: user._id, username: user.username, firstname: 'Ada & Co/?' });
      expect(request.json.document.password).toBeUndefined();
      expect(request.json.document.password_hash).toBeUndefined();
      expect(request.json.prior).toBeNull();
      const events = await queryEvents(suite.t, admin, { event_type: 'UserCreated', 'document._id': user._id });
      expect(request.json.payload).toEqual({
        greeting: 'Hello Ada & Co/? Lovelace',
        nested: { at: events[0].event_time, list: [user.email_address, 7] },
        fixed: true,
      });

      const [sent] = await waitForResults(suite.t, admin, hook._id, 1);
      expect(sent).toMatchObject({
        event_type: 'WebhookRequestSent',
        utilizer_id: 'system',
        document: {
          webhook_id: hook._id,
          attempt: 1,
          request: { method: 'POST', headers: expect.objectContaining({ 'X-Event': 'UserCreated' }) },
          response: { status: 200, body: 'ok' },
        },
      });
      expect(sent.document.request.url).toContain(`/UserCreated/${user._id}`);
      expect(sent.document.error).toBeUndefined();
    });

    it('sends the configured body alone when uncoveredBody is true, and no body for GET', async () => {
      const { admin } = await tenant();
      const p = path();
      await createWebhook(suite.t, admin, receiver.url(`${p}/uncovered`), { request: { uncoveredBody: true, body: { user: '{{document.username}}' } } });
      await createWebhook(suite.t, admin, receiver.url(`${p}/get`), { request: { method: 'GET', body: { ignored: true } } });
      const user = await createUser(suite.t, admin);
      const [uncovered] = await receiver.waitForRequests(1, { path: `${p}/uncovered` });
      expect(uncovered.json).toEqual({ user: user.username });
      const [get] = await receiver.waitForRequests(1, { path: `${p}/get` });
      expect(get.method).toBe('GET');
      expect(get.body).toBe('');
    });

    it('keeps hostile values inside their JSON string, drops headers that would carry a line break, encodes URL values', async () => {
      const { admin } = await tenant();
      const p = path();
      const hostile = '"},"admin":true,"x":{"';
      await createWebhook(suite.t, admin, receiver.url(`${p}/users?first={{document.firstname}}`), {
        request: { headers: { 'X-First': '{{document.firstname}}' }, body: { name: '{{document.firstname}}', role: 'user' } },
      });
      await createUser(suite.t, admin, { firstname: hostile });
      const [request] = await receiver.waitForRequests(1, { path: `${p}/users` });
      expect(request.json.payload).toEqual({ name: hostile, role: 'user' });
      expect(request.json.admin).toBeUndefined();
      expect(request.json.payload.admin).toBeUndefined();
      expect(new URL(request.url, 'http://x').searchParams.get('first')).toBe(hostile);
      expect(request.url).not.toContain('"');
      expect(request.headers['x-first']).toBe(hostile);

      // A header whose value would contain CR LF is left out: the description of a new webhook
      // is free text and reaches the header of a webhook on WebhookCreated.
      const onCreated = await createWebhook(suite.t, admin, receiver.url(`${p}/on-created`), {
        event: 'WebhookCreated',
        request: { headers: { 'X-Description': '{{document.description}}', 'X-Name': '{{document.name}}' } },
      });
      await createWebhook(suite.t, admin, 'https://example.com/never', { status: 'passive', name: 'injector', description: 'line\r\nX-Injected: yes' });
      // Two calls: one for the creation of `onCreated` itself (no description), one for `injector`.
      const calls = await receiver.waitForRequests(2, { path: `${p}/on-created` });
      const created = calls.find((call) => call.headers['x-name'] === 'injector')!;
      expect(created).toBeDefined();
      expect(created.headers['x-description']).toBeUndefined();
      expect(created.headers['x-injected']).toBeUndefined();
      expect(created.json.document.description).toBe('line\r\nX-Injected: yes');
      const results = await waitForResults(suite.t, admin, onCreated._id, 2);
      const skipped = results.find((result) => result.document.skipped_headers);
      expect(skipped?.document.skipped_headers).toEqual(['X-Description']);
      expect(skipped?.document.request.headers['X-Description']).toBeUndefined();
    });

    it('never calls passive webhooks', async () => {
      const { admin } = await tenant();
      const p = path();
      const passive = await createWebhook(suite.t, admin, receiver.url(`${p}/passive`), { status: 'passive' });
      await createWebhook(suite.t, admin, receiver.url(`${p}/active`));
      await createUser(suite.t, admin);
      // The active webhook of the same event is called: by then the passive one would have been too.
      await receiver.waitForRequests(1, { path: `${p}/active` });
      await waitForResults(suite.t, admin, (await queryEvents(suite.t, admin, { event_type: 'WebhookCreated', 'document.status': 'active' }))[0].document._id, 1);
      expect(receiver.received(`${p}/passive`)).toHaveLength(0);
      expect(await queryEvents(suite.t, admin, { 'document.webhook_id': passive._id })).toHaveLength(0);
    });

    it('retries at once after a failure: 500 then 200 gives two attempts, one Failed and one Sent event', async () => {
      const { admin } = await tenant();
      const p = path();
      receiver.answer(500, 200);
      const hook = await createWebhook(suite.t, admin, receiver.url(`${p}/retry`), { try_count: 3 });
      await createUser(suite.t, admin);
      const results = await waitForResults(suite.t, admin, hook._id, 2);
      receiver.answer(200);
      expect(receiver.received(`${p}/retry`)).toHaveLength(2);
      expect(results.map((e) => [e.event_type, e.document.attempt, e.document.response?.status])).toEqual([
        ['WebhookRequestFailed', 1, 500],
        ['WebhookRequestSent', 2, 200],
      ]);
      expect(results[0].document.error).toContain('500');
    });

    it('makes exactly try_count attempts against a receiver that always fails', async () => {
      const { admin } = await tenant();
      const p = path();
      receiver.answer(503);
      const hook = await createWebhook(suite.t, admin, receiver.url(`${p}/down`), { try_count: 3 });
      try {
        await createUser(suite.t, admin);
        const results = await waitForResults(suite.t, admin, hook._id, 3);
        expect(results.map((e) => [e.event_type, e.document.attempt])).toEqual([
          ['WebhookRequestFailed', 1],
          ['WebhookRequestFailed', 2],
          ['WebhookRequestFailed', 3],
        ]);
        // Give a fourth attempt the time to show up, if there were one.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(receiver.received(`${p}/down`)).toHaveLength(3);
        expect(await waitForResults(suite.t, admin, hook._id, 3)).toHaveLength(3);
      } finally {
        receiver.answer(200);
      }
    });

    it('does not delay the request that caused the event when the receiver hangs; the attempt times out', async () => {
      const { admin } = await tenant();
      const p = path();
      receiver.answer('hang');
      // Fires on WebhookCreated: its own creation and the trigger's below each make calls that hang.
      const hook = await createWebhook(suite.t, admin, receiver.url(`${p}/hang`), { try_count: 2, event: 'WebhookCreated', name: 'hanging' });
      try {
        const trigger = await createWebhook(suite.t, admin, 'https://example.com/x', { status: 'passive' });
        // Had the request waited for its event's call, that call would have timed out and been
        // closed by the service before the answer: when the answer is here, it is at most hanging.
        const triggerCalls = () => receiver.received(`${p}/hang`).filter((call) => call.json?.document?._id === trigger._id);
        expect(triggerCalls().map((call) => call.state)).not.toContain('closed by the caller');
        // Two attempts: one for `hanging` itself, and the first of the trigger's; both hang.
        await receiver.waitForRequests(2, { path: `${p}/hang` });
        const results = await waitForResults(suite.t, admin, hook._id, 4, 5000);
        expect(results).toHaveLength(4);
        expect(results.map((e) => e.document.attempt).sort()).toEqual([1, 1, 2, 2]);
        for (const result of results) {
          expect(result.event_type).toBe('WebhookRequestFailed');
          expect(result.document.response).toBeNull();
          expect(result.document.error).toMatch(/within 500 ms/);
        }
        expect(triggerCalls()).toHaveLength(2);
        const closed = (call: { state: string }) => call.state === 'closed by the caller';
        await eventually(async () => (receiver.received(`${p}/hang`).every(closed) ? true : undefined), 'every hung attempt closed by the service');
        // Other requests are served normally meanwhile.
        expect((await suite.t.http().get('/ping')).status).toBe(200);
      } finally {
        receiver.answer(200);
      }
    });

    it('signs the body with the webhook secret (X-Webhook-Signature verifies)', async () => {
      const { admin } = await tenant();
      const p = path();
      const secret = 'whsec-0123456789abcdef';
      const hook = await createWebhook(suite.t, admin, receiver.url(`${p}/signed`), { secret, request: { headers: { Authorization: 'Bearer receiver-credential-1' } } });
      await createUser(suite.t, admin);
      const [request] = await receiver.waitForRequests(1, { path: `${p}/signed` });
      const header = request.headers['x-webhook-signature'] as string;
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      const now = Math.floor(Date.now() / 1000);
      expect(verifyWebhookSignature(secret, request.body, header, 300, now)).toBe(true);
      expect(verifyWebhookSignature('another-secret-value', request.body, header, 300, now)).toBe(false);
      expect(verifyWebhookSignature(secret, `${request.body} `, header, 300, now)).toBe(false);
      expect(request.headers.authorization).toBe('Bearer receiver-credential-1');

      // The result event shows the request with the credential masked, never the secret.
      const [sent] = await waitForResults(suite.t, admin, hook._id, 1);
      expect(sent.document.request.headers.Authorization).toBe('[masked]');
      expect(JSON.stringify(sent)).not.toContain('receiver-credential-1');
      expect(JSON.stringify(sent)).not.toContain(secret);
    });

    it('records a failed attempt without sending anything when the URL does not render to a valid URL', async () => {
      const { admin } = await tenant();
      const p = path();
      // Valid as a template (a sample value renders to a valid host), invalid for a first name with a space.
      const hook = await createWebhook(suite.t, admin, `http://{{document.firstname}}.localhost${p}`, { try_count: 3 });
      await createUser(suite.t, admin, { firstname: 'not a host' });
      const [failed] = await waitForResults(suite.t, admin, hook._id, 1);
      expect(failed.event_type).toBe('WebhookRequestFailed');
      expect(failed.document).toMatchObject({ webhook_id: hook._id, attempt: 1, response: null });
      expect(failed.document.error).toMatch(/could not be built/);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Rendering fails the same way each time: one attempt, not three.
      expect(await waitForResults(suite.t, admin, hook._id, 1)).toHaveLength(1);
    });

    it('calls every active webhook of the event, and result events trigger nothing', async () => {
      const { admin } = await tenant();
      const p = path();
      await createWebhook(suite.t, admin, receiver.url(`${p}/one`));
      await createWebhook(suite.t, admin, receiver.url(`${p}/two`));
      await createWebhook(suite.t, admin, receiver.url(`${p}/deleted-user`), { event: 'UserDeleted' });
      const user = await createUser(suite.t, admin);
      await receiver.waitForRequests(1, { path: `${p}/one` });
      await receiver.waitForRequests(1, { path: `${p}/two` });
      expect(receiver.received(`${p}/deleted-user`)).toHaveLength(0);

      const del = await suite.t.http().delete(`/memberships/${admin.membershipId}/users/${user._id}`).set('Authorization', admin.auth);
      expect(del.status).toBe(204);
      const [deleted] = await receiver.waitForRequests(1, { path: `${p}/deleted-user` });
      expect(deleted.json.document).toEqual({});
      expect(deleted.json.prior).toMatchObject({ _id: user._id });
      const sent = await eventually(async () => {
        const items = await queryEvents(suite.t, admin, { event_type: 'WebhookRequestSent' });
        return items.length >= 3 ? items : undefined;
      }, 'three WebhookRequestSent events');
      expect(sent).toHaveLength(3);
    });

    it('a webhook created on this instance is used at once; a deleted one is not called any more', async () => {
      const { admin } = await tenant();
      const p = path();
      await createUser(suite.t, admin); // warms this instance's lookup for UserCreated: no webhooks
      const hook = await createWebhook(suite.t, admin, receiver.url(`${p}/fresh`));
      await createUser(suite.t, admin);
      await receiver.waitForRequests(1, { path: `${p}/fresh` });
      expect((await suite.t.http().delete(`${webhooksPath(admin.membershipId)}/${hook._id}`).set('Authorization', admin.auth)).status).toBe(204);
      const marker = await createWebhook(suite.t, admin, receiver.url(`${p}/marker`));
      await createUser(suite.t, admin);
      await receiver.waitForRequests(1, { path: `${p}/marker` });
      await waitForResults(suite.t, admin, marker._id, 1);
      expect(receiver.received(`${p}/fresh`)).toHaveLength(1);
    });

    it('reports webhook calls and the webhook queue to the metrics', async () => {
      const { admin } = await tenant();
      const hook = await createWebhook(suite.t, admin, receiver.url(`${path()}/metrics`));
      await createUser(suite.t, admin);
      await waitForResults(suite.t, admin, hook._id, 1);
      const metrics = await suite.t.http().get('/metrics');
      expect(metrics.status).toBe(200);
      const lines = metrics.text.split('\n').filter((line) => !line.startsWith('#'));
      expect(lines.some((line) => line.includes('kind="webhook"') && line.includes('outcome="success"'))).toBe(true);
      expect(lines.some((line) => line.includes('queue="webhooks"'))).toBe(true);
    });

    it('lets events.read holders read result events only inside their membership', async () => {
      const { admin } = await tenant();
      const other = await tenant();
      const p = path();
      const hook = await createWebhook(suite.t, admin, receiver.url(`${p}/own`));
      await createUser(suite.t, admin);
      const [sent] = await waitForResults(suite.t, admin, hook._id, 1);
      const foreign = await suite.t.http().get(`${eventsPath(other.membershipId)}/${sent._id}`).set('Authorization', other.admin.auth);
      expect(foreign.status).toBe(404);
      expect(foreign.body.errorCode).toBe('EventNotFound');
    });
  });
});
