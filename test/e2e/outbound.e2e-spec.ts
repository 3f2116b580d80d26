import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import ipaddr from 'ipaddr.js';
import { startTestApp, type TestApp } from '../support/app';
import { createMembership, createUser, createWebhook, type Json, setupInstallation, type SignedIn, unique, waitForResults, webhookBody, webhooksPath } from '../support/api';
import { ALLOW_LOOPBACK_RECEIVERS, WebhookReceiver } from '../support/webhook-receiver';

/**
 * The outbound policy (contract "Outbound calls") as a tenant administrator meets it. Nothing here
 * aims at a private or public address: refused IP literals are only ever strings in a create body
 * (passive webhooks on an event no test records, so even a wrongly stored one is never called),
 * and the connect-time refusal is shown with host names that stand for loopback.
 */

/** Every spelling of a refused destination a create must turn away. */
const REFUSED_URLS = [
  'http://127.0.0.1/x',
  'http://127.0.0.1:8080/metrics',
  'http://2130706433/',
  'http://0x7f.1/',
  'http://0x7f000001/',
  'http://0177.0.0.1/',
  'http://127.1/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[0:0:0:0:0:ffff:7f00:1]/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[fe80::1]/',
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://192.168.1.1/',
  'http://[fc00::1]/',
  'http://[::ffff:10.0.0.1]/',
  'http://100.64.0.1/',
  'http://0.0.0.0/',
  'http://[::]/',
  'http://224.0.0.1/',
  'http://255.255.255.255/',
  'https://localhost/',
  'http://LOCALHOST./',
  'http://api.localhost:8080/',
  // A placeholder before the host cannot move it: substituted values are URL-encoded.
  'http://{{document._id}}@127.0.0.1/',
];

/** A name of this machine that resolves to loopback only, when there is one (CI hosts may differ). */
async function loopbackHostName(): Promise<string | undefined> {
  const name = hostname();
  try {
    const addresses = await lookup(name, { all: true });
    const loopback = addresses.length > 0 && addresses.every(({ address }) => ipaddr.parse(address).range() === 'loopback');
    return loopback ? name : undefined;
  } catch {
    return undefined;
  }
}

describe('outbound policy', () => {
  let strict: TestApp;
  let allowing: TestApp;
  let receiver: WebhookReceiver;
  let strictAdmin: SignedIn;
  let allowingAdmin: SignedIn;

  beforeAll(async () => {
    strict = await startTestApp({ env: { WEBHOOK_TIMEOUT_MS: '1000' } });
    allowing = await startTestApp({ env: { WEBHOOK_TIMEOUT_MS: '1000', ...ALLOW_LOOPBACK_RECEIVERS } });
    receiver = await WebhookReceiver.start();
    strictAdmin = (await setupInstallation(strict)).admin;
    allowingAdmin = (await setupInstallation(allowing)).admin;
    // Two apps and two installations: minutes, not seconds, on a loaded two-core CI machine.
  }, 240_000);
  afterAll(async () => {
    await strict?.close();
    await allowing?.close();
    await receiver?.close();
  });
  beforeEach(() => receiver.reset());

  /** Creates a webhook that is never called; a wrongly stored one is deleted before the test fails. */
  async function createNeverCalled(t: TestApp, admin: SignedIn, url: string): Promise<{ status: number; body: Json }> {
    const res = await t
      .http()
      .post(webhooksPath(admin.membershipId))
      .set('Authorization', admin.auth)
      .send(webhookBody(url, { status: 'passive', event: 'RoleDeleted' }));
    if (res.status === 201) {
      await t.http().delete(`${webhooksPath(admin.membershipId)}/${res.body._id}`).set('Authorization', admin.auth);
    }
    return { status: res.status, body: res.body };
  }

  const notAllowed = { statusCode: 400, errorCode: 'ModelValidationError', errors: [{ field: 'request.url', message: expect.stringMatching(/^destination not allowed \([a-zA-Z4 -]+; see OUTBOUND_ALLOW\)$/) }] };

  describe('at create and update', () => {
    let tenantAdmin: SignedIn;
    beforeAll(async () => {
      tenantAdmin = (await createMembership(strict, strictAdmin)).admin;
    });

    it.each(REFUSED_URLS)('refuses %s: 400 ModelValidationError on request.url', async (url) => {
      const admin = tenantAdmin;
      const res = await createNeverCalled(strict, admin, url);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject(notAllowed);
    });

    it('refuses a webhook to the service itself: the reproduction of issue 15 (GET /metrics on its own loopback)', async () => {
      const { admin } = await createMembership(strict, strictAdmin);
      const res = await createNeverCalled(strict, admin, `${strict.url}/metrics`);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject(notAllowed);
    });

    it('refuses an update to a refused destination and keeps the stored webhook', async () => {
      const { admin } = await createMembership(strict, strictAdmin);
      const hook = await createWebhook(strict, admin, 'https://hooks.example.com/a', { status: 'passive', event: 'RoleDeleted' });
      const put = await strict
        .http()
        .put(`${webhooksPath(admin.membershipId)}/${hook._id}`)
        .set('Authorization', admin.auth)
        .send(webhookBody('http://169.254.169.254/latest/meta-data/', { name: hook.name, status: 'passive', event: 'RoleDeleted' }));
      expect(put.status).toBe(400);
      expect(put.body).toMatchObject(notAllowed);
      const get = await strict.http().get(`${webhooksPath(admin.membershipId)}/${hook._id}`).set('Authorization', admin.auth);
      expect(get.body.request.url).toBe('https://hooks.example.com/a');
    });

    it('stores host names and templated hosts: they are judged when the call is made', async () => {
      const { admin } = await createMembership(strict, strictAdmin);
      for (const url of ['https://hooks.example.com/a', 'http://{{document.firstname}}:8080/x', 'https://{{membership_id}}.example.com/']) {
        const res = await createNeverCalled(strict, admin, url);
        expect([url, res.status]).toEqual([url, 201]);
      }
    });

    it('stores a loopback receiver when OUTBOUND_ALLOW permits it', async () => {
      const { admin } = await createMembership(allowing, allowingAdmin);
      for (const url of [receiver.url('/allowed'), `http://[::1]:${receiver.port}/`, `http://localhost:${receiver.port}/`]) {
        const res = await createNeverCalled(allowing, admin, url);
        expect([url, res.status]).toEqual([url, 201]);
      }
      // The allowlist names loopback only: other refused ranges stay refused.
      expect((await createNeverCalled(allowing, admin, 'http://10.0.0.1/')).body).toMatchObject(notAllowed);
    });
  });

  describe('at connect time', () => {
    /** A webhook whose host the create-time check cannot see: the user's first name renders it. */
    const templatedHost = (): string => `http://{{document.firstname}}:${receiver.port}/${unique('p')}`;

    it('ends the call with OutboundDestinationBlocked when the host renders to a loopback name, sends nothing, and does not retry', async () => {
      const { admin } = await createMembership(strict, strictAdmin);
      const hook = await createWebhook(strict, admin, templatedHost(), { try_count: 3 });
      await createUser(strict, admin, { firstname: 'localhost' });
      const [failed] = await waitForResults(strict, admin, hook._id, 1);
      expect(failed.event_type).toBe('WebhookRequestFailed');
      expect(failed.document).toMatchObject({
        webhook_id: hook._id,
        attempt: 1,
        response: null,
        error_code: 'OutboundDestinationBlocked',
        error: expect.stringMatching(/^OutboundDestinationBlocked: /),
      });
      // A second user's call ends the same way: by then a retry of the first would have been recorded.
      await createUser(strict, admin, { firstname: 'LOCALHOST' });
      const results = await waitForResults(strict, admin, hook._id, 2);
      expect(results.map((result) => [result.event_type, result.document.attempt, result.document.error_code])).toEqual([
        ['WebhookRequestFailed', 1, 'OutboundDestinationBlocked'],
        ['WebhookRequestFailed', 1, 'OutboundDestinationBlocked'],
      ]);
      expect(receiver.received()).toHaveLength(0);
    });

    it('makes the same call when OUTBOUND_ALLOW permits loopback, and keeps the start of the answer', async () => {
      const { admin } = await createMembership(allowing, allowingAdmin);
      receiver.answer(200).answerWith('receiver says hello');
      const hook = await createWebhook(allowing, admin, templatedHost(), { try_count: 3 });
      await createUser(allowing, admin, { firstname: 'localhost' });
      const [sent] = await waitForResults(allowing, admin, hook._id, 1);
      expect(sent.event_type).toBe('WebhookRequestSent');
      expect(sent.document.response).toEqual({ status: 200, body: 'receiver says hello' });
      expect(sent.document.error_code).toBeUndefined();
      expect(receiver.received()).toHaveLength(1);
    });

    it("refuses this machine's own name when it resolves to loopback, and calls it when allowed", async () => {
      const name = await loopbackHostName();
      if (name === undefined) {
        // Where the host name does not resolve to loopback only, the templated cases above carry the proof.
        return;
      }
      const refused = await createMembership(strict, strictAdmin);
      const blocked = await createWebhook(strict, refused.admin, `http://${name}:${receiver.port}/${unique('p')}`, { try_count: 2 });
      await createUser(strict, refused.admin);
      const [failed] = await waitForResults(strict, refused.admin, blocked._id, 1);
      expect(failed.document).toMatchObject({ response: null, error_code: 'OutboundDestinationBlocked' });
      expect(receiver.received()).toHaveLength(0);

      const allowed = await createMembership(allowing, allowingAdmin);
      const hook = await createWebhook(allowing, allowed.admin, `http://${name}:${receiver.port}/${unique('p')}`);
      await createUser(allowing, allowed.admin);
      const [sent] = await waitForResults(allowing, allowed.admin, hook._id, 1);
      expect(sent.event_type).toBe('WebhookRequestSent');
      expect(receiver.received()).toHaveLength(1);
    });

    it('does not follow a redirect, even to another path of an allowed receiver: the 3xx is the result', async () => {
      const { admin } = await createMembership(allowing, allowingAdmin);
      const path = `/${unique('p')}`;
      receiver.answer(302).answerWithHeaders({ Location: receiver.url(`${path}/elsewhere`) });
      const hook = await createWebhook(allowing, admin, receiver.url(path));
      await createUser(allowing, admin);
      const [failed] = await waitForResults(allowing, admin, hook._id, 1);
      expect(failed.event_type).toBe('WebhookRequestFailed');
      expect(failed.document.response.status).toBe(302);
      expect(receiver.received().map((request) => request.url)).toEqual([path]);
    });
  });
});
