import { verifyWebhookSignature } from '../../src/webhooks/signature';
import { startTestApp, type TestApp } from '../support/app';
import {
  createApplication,
  type CreatedMembership,
  createMembership,
  createRole,
  createUser,
  createWebhook,
  eventsPath,
  eventually,
  type Json,
  queryEvents,
  setupInstallation,
  type SignedIn,
  unique,
  waitForResults,
  webhookBody,
  webhooksPath,
} from '../support/api';
import { ALLOW_LOOPBACK_RECEIVERS, WebhookReceiver } from '../support/webhook-receiver';

const TIMEOUT_MS = 500;

describe('webhooks', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let systemAdmin: SignedIn;

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), ...ALLOW_LOOPBACK_RECEIVERS } });
    receiver = await WebhookReceiver.start();
    systemAdmin = (await setupInstallation(t)).admin;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  /** Every test works in a membership of its own, so webhooks of one test never see another's events. */
  async function tenant(): Promise<CreatedMembership> {
    return createMembership(t, systemAdmin);
  }

  const path = (): string => `/${unique('p')}`;

  describe('API', () => {
    it('creates a webhook (201) with a slug, without the secret, and records WebhookCreated without it', async () => {
      const { admin } = await tenant();
      const secret = 'a-very-secret-signing-key-123';
      const res = await t
        .http()
        .post(webhooksPath(admin.membershipId))
        .set('Authorization', admin.auth)
        .send(
          webhookBody('https://example.com/hooks/{{event_type}}', {
            name: 'Notify CRM!',
            description: 'tells the CRM',
            try_count: 3,
            secret,
            request: { method: 'post', headers: { Authorization: 'Bearer receiver-credential', 'X-Event': '{{event_type}}' }, body: { id: '{{document._id}}' } },
          }),
        );
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        _id: expect.any(String),
        name: 'Notify CRM!',
        slug: 'notify-crm',
        description: 'tells the CRM',
        event: 'UserCreated',
        status: 'active',
        try_count: 3,
        request: {
          method: 'POST',
          url: 'https://example.com/hooks/{{event_type}}',
          headers: { Authorization: 'Bearer receiver-credential', 'X-Event': '{{event_type}}' },
          body: { id: '{{document._id}}' },
          uncoveredBody: false,
        },
        has_secret: true,
        membership_id: admin.membershipId,
        sys: { created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/), created_by: admin.userId },
      });
      const get = await t.http().get(`${webhooksPath(admin.membershipId)}/${res.body._id}`).set('Authorization', admin.auth);
      expect(get.status).toBe(200);
      expect(get.body).toEqual(res.body);
      expect(JSON.stringify(get.body)).not.toContain(secret);

      const [created] = await queryEvents(t, admin, { event_type: 'WebhookCreated', 'document._id': res.body._id });
      expect(created.utilizer_id).toBe(admin.userId);
      expect(created.prior).toBeNull();
      expect(created.document.slug).toBe('notify-crm');
      expect(created.document.has_secret).toBe(true);
      // The event log masks the receiver's credential and never holds the signing secret.
      expect(created.document.request.headers).toEqual({ Authorization: '[masked]', 'X-Event': '{{event_type}}' });
      expect(JSON.stringify(created)).not.toContain(secret);
      expect(JSON.stringify(created)).not.toContain('receiver-credential');
    });

    it('answers 400 ModelValidationError with field errors for every missing required field', async () => {
      const { admin } = await tenant();
      const empty = await t.http().post(webhooksPath(admin.membershipId)).set('Authorization', admin.auth).send({});
      expect(empty.status).toBe(400);
      expect(empty.body.errorCode).toBe('ModelValidationError');
      const fields = (empty.body.errors as { field: string }[]).map((e) => e.field);
      expect(fields).toEqual(expect.arrayContaining(['name', 'event', 'status', 'try_count', 'request']));

      const noMethodNoUrl = await t
        .http()
        .post(webhooksPath(admin.membershipId))
        .set('Authorization', admin.auth)
        .send({ name: 'x', event: 'UserCreated', status: 'active', try_count: 1, request: {} });
      expect(noMethodNoUrl.status).toBe(400);
      expect((noMethodNoUrl.body.errors as { field: string }[]).map((e) => e.field).sort()).toEqual(['request.method', 'request.url']);
    });

    it.each([
      ['an unknown event type', { event: 'UserExploded' }, 'event'],
      ['a result event as trigger', { event: 'WebhookRequestSent' }, 'event'],
      ['another result event as trigger', { event: 'MailhookMailFailed' }, 'event'],
      ['an unknown HTTP method', { request: { method: 'BREW' } }, 'request.method'],
      ['try_count 0', { try_count: 0 }, 'try_count'],
      ['try_count 6', { try_count: 6 }, 'try_count'],
      ['a fractional try_count', { try_count: 2.5 }, 'try_count'],
      ['try_count as text', { try_count: '3' }, 'try_count'],
      ['an unknown status', { status: 'sleeping' }, 'status'],
      ['a relative URL', { request: { url: '/hooks' } }, 'request.url'],
      ['a non-http URL', { request: { url: 'ftp://example.com/x' } }, 'request.url'],
      ['a javascript: URL', { request: { url: 'javascript:alert(1)' } }, 'request.url'],
      ['a URL that is only a placeholder', { request: { url: '{{document.url}}' } }, 'request.url'],
      ['a placeholder deciding the scheme', { request: { url: '{{document.scheme}}://example.com' } }, 'request.url'],
      ['an unknown placeholder in the URL', { request: { url: 'https://example.com/{{password}}' } }, 'request.url'],
      ['a header with a non-string value', { request: { headers: { 'X-N': 5 } } }, 'request.headers'],
      ['a header with a line break in its template', { request: { headers: { 'X-A': 'a\r\nX-B: b' } } }, 'request.headers'],
      ['an invalid header name', { request: { headers: { 'Bad Name': 'x' } } }, 'request.headers'],
      ['a header the service sets itself', { request: { headers: { Host: 'evil.example' } } }, 'request.headers'],
      ['the signature header', { request: { headers: { 'X-Webhook-Signature': 'forged' } } }, 'request.headers'],
      ['an unknown placeholder in a header', { request: { headers: { 'X-A': '{{nope}}' } } }, 'request.headers'],
      ['headers as an array', { request: { headers: ['a'] } }, 'request.headers'],
      ['a body that is an array', { request: { body: [1, 2] } }, 'request.body'],
      ['a body that is a string', { request: { body: 'text' } }, 'request.body'],
      ['an unknown placeholder in the body', { request: { body: { a: { b: '{{document.x}} {{env.HOME}}' } } } }, 'request.body'],
      ['uncoveredBody as text', { request: { uncoveredBody: 'yes' } }, 'request.uncoveredBody'],
      ['a short secret', { secret: 'short' }, 'secret'],
      ['an unknown field', { colour: 'red' }, 'colour'],
      ['an empty name', { name: '' }, 'name'],
    ])('refuses %s with 400 naming the field', async (_what, overrides, field) => {
      const { admin } = await tenant();
      const res = await t.http().post(webhooksPath(admin.membershipId)).set('Authorization', admin.auth).send(webhookBody('https://example.com/h', overrides));
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
      expect((res.body.errors as { field: string }[]).map((e) => e.field)).toContain(field);
    });

    it('accepts every documented method, in any case, and placeholders in path, query, host label, headers and body', async () => {
      const { admin } = await tenant();
      for (const method of ['GET', 'post', 'Put', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) {
        const hook = await createWebhook(t, admin, 'https://{{membership_id}}.example.com/{{event_type}}?id={{document._id}}&by={{document.sys.created_by}}', {
          request: { method, headers: { 'X-Time': '{{ event_time }}' }, body: { a: ['{{prior.name}}', { b: '{{utilizer_id}}' }], n: 1 } },
        });
        expect(hook.request.method).toBe(method.toUpperCase());
      }
    });

    it('refuses a second webhook whose name gives the same slug: 409 WebhookAlreadyExists', async () => {
      const { admin } = await tenant();
      await createWebhook(t, admin, 'https://example.com/a', { name: 'Order Hook' });
      const again = await t.http().post(webhooksPath(admin.membershipId)).set('Authorization', admin.auth).send(webhookBody('https://example.com/b', { name: 'order hook' }));
      expect(again.status).toBe(409);
      expect(again.body.errorCode).toBe('WebhookAlreadyExists');
      // The same name in another membership is fine.
      const other = await tenant();
      await createWebhook(t, other.admin, 'https://example.com/a', { name: 'Order Hook' });
    });

    it('replaces with PUT (WebhookUpdated with prior), answers 409 IdenticalDocumentError when nothing changes, keeps or removes the secret', async () => {
      const { admin } = await tenant();
      const hook = await createWebhook(t, admin, 'https://example.com/a', {
        secret: 'sixteen-chars-or-more',
        request: { headers: { 'X-A': '1', 'X-B': '2' }, body: { k: 'v', z: { y: 1, x: 2 } } },
      });
      const url = `${webhooksPath(admin.membershipId)}/${hook._id}`;
      const sameBody = {
        name: hook.name,
        event: 'UserCreated',
        status: 'active',
        try_count: 1,
        // Same content, other key order: still identical.
        request: { body: { z: { x: 2, y: 1 }, k: 'v' }, headers: { 'X-B': '2', 'X-A': '1' }, url: 'https://example.com/a', method: 'post' },
      };
      const identical = await t.http().put(url).set('Authorization', admin.auth).send(sameBody);
      expect(identical.status).toBe(409);
      expect(identical.body.errorCode).toBe('IdenticalDocumentError');
      const sameSecret = await t.http().put(url).set('Authorization', admin.auth).send({ ...sameBody, secret: 'sixteen-chars-or-more' });
      expect(sameSecret.status).toBe(409);

      const renamed = await t.http().put(url).set('Authorization', admin.auth).send({ ...sameBody, name: 'Renamed Hook', status: 'passive', try_count: 4 });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ _id: hook._id, name: 'Renamed Hook', slug: 'renamed-hook', status: 'passive', try_count: 4, has_secret: true });
      expect(renamed.body.sys).toMatchObject({ created_by: admin.userId, modified_by: admin.userId, modified_at: expect.any(String) });

      const [updated] = await queryEvents(t, admin, { event_type: 'WebhookUpdated', 'document._id': hook._id });
      expect(updated.prior).toMatchObject({ name: hook.name, status: 'active', try_count: 1 });
      expect(updated.document).toMatchObject({ name: 'Renamed Hook', status: 'passive', try_count: 4 });

      const removed = await t.http().put(url).set('Authorization', admin.auth).send({ ...sameBody, name: 'Renamed Hook', status: 'passive', try_count: 4, secret: null });
      expect(removed.status).toBe(200);
      expect(removed.body.has_secret).toBe(false);
    });

    it('answers 404 WebhookNotFound for unknown ids and ids of another membership; 400 for an invalid PUT body', async () => {
      const { admin } = await tenant();
      const other = await tenant();
      const foreign = await createWebhook(t, other.admin, 'https://example.com/a');
      for (const id of ['no-such-id', foreign._id]) {
        const get = await t.http().get(`${webhooksPath(admin.membershipId)}/${id}`).set('Authorization', admin.auth);
        expect(get.status).toBe(404);
        expect(get.body.errorCode).toBe('WebhookNotFound');
        const put = await t.http().put(`${webhooksPath(admin.membershipId)}/${id}`).set('Authorization', admin.auth).send(webhookBody('https://example.com/x'));
        expect(put.status).toBe(404);
        const del = await t.http().delete(`${webhooksPath(admin.membershipId)}/${id}`).set('Authorization', admin.auth);
        expect(del.status).toBe(404);
      }
      const hook = await createWebhook(t, admin, 'https://example.com/a');
      const bad = await t.http().put(`${webhooksPath(admin.membershipId)}/${hook._id}`).set('Authorization', admin.auth).send({ name: 'x' });
      expect(bad.status).toBe(400);
      expect(bad.body.errorCode).toBe('ModelValidationError');
    });

    it('deletes one webhook (204, WebhookDeleted with prior and an empty document)', async () => {
      const { admin } = await tenant();
      const hook = await createWebhook(t, admin, 'https://example.com/a', { secret: 'sixteen-chars-or-more' });
      const del = await t.http().delete(`${webhooksPath(admin.membershipId)}/${hook._id}`).set('Authorization', admin.auth);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      const get = await t.http().get(`${webhooksPath(admin.membershipId)}/${hook._id}`).set('Authorization', admin.auth);
      expect(get.status).toBe(404);
      const [deleted] = await queryEvents(t, admin, { event_type: 'WebhookDeleted', 'prior._id': hook._id });
      expect(deleted.document).toEqual({});
      expect(deleted.prior).toMatchObject({ _id: hook._id, name: hook.name, has_secret: true });
      expect(JSON.stringify(deleted)).not.toContain('sixteen-chars-or-more');
    });

    it('bulk-deletes: {deleted, not_found}, one WebhookDeleted per webhook, other memberships untouched', async () => {
      const { admin } = await tenant();
      const other = await tenant();
      const a = await createWebhook(t, admin, 'https://example.com/a');
      const b = await createWebhook(t, admin, 'https://example.com/b');
      const keep = await createWebhook(t, admin, 'https://example.com/c');
      const foreign = await createWebhook(t, other.admin, 'https://example.com/d');
      const res = await t
        .http()
        .delete(webhooksPath(admin.membershipId))
        .set('Authorization', admin.auth)
        .send({ ids: [a._id, b._id, 'missing', foreign._id, a._id] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ deleted: [a._id, b._id], not_found: ['missing', foreign._id] });
      const events = await queryEvents(t, admin, { event_type: 'WebhookDeleted' });
      expect(events.map((e) => e.prior._id).sort()).toEqual([a._id, b._id].sort());
      expect((await t.http().get(`${webhooksPath(admin.membershipId)}/${keep._id}`).set('Authorization', admin.auth)).status).toBe(200);
      expect((await t.http().get(`${webhooksPath(other.membershipId)}/${foreign._id}`).set('Authorization', other.admin.auth)).status).toBe(200);

      for (const body of [{}, { ids: [] }, { ids: 'x' }, { ids: [1] }, { ids: Array.from({ length: 1001 }, (_, i) => `id${i}`) }]) {
        const bad = await t.http().delete(webhooksPath(admin.membershipId)).set('Authorization', admin.auth).send(body);
        expect(bad.status).toBe(400);
      }
    });

    it('lists and queries with where, dotted select, sort, limit and count; refuses the secret and unknown operators', async () => {
      const { admin } = await tenant();
      await createWebhook(t, admin, 'https://example.com/1', { name: 'b-hook', event: 'UserCreated' });
      await createWebhook(t, admin, 'https://example.com/2', { name: 'a-hook', event: 'UserDeleted', secret: 'sixteen-chars-or-more' });
      await createWebhook(t, admin, 'https://example.com/3', { name: 'c-hook', event: 'UserDeleted', status: 'passive' });

      const list = await t.http().get(webhooksPath(admin.membershipId)).query({ with_count: 'true' }).set('Authorization', admin.auth);
      expect(list.status).toBe(200);
      expect(list.body.count).toBe(3);
      expect(list.body.items.map((w: Json) => w.name)).toEqual(['b-hook', 'a-hook', 'c-hook']);
      expect(JSON.stringify(list.body)).not.toContain('sixteen-chars-or-more');

      const sorted = await t.http().get(webhooksPath(admin.membershipId)).query({ sort: 'slug desc', limit: '2' }).set('Authorization', admin.auth);
      expect(sorted.body.items.map((w: Json) => w.slug)).toEqual(['c-hook', 'b-hook']);
      expect(sorted.body.count).toBeUndefined();

      const query = await t
        .http()
        .post(`${webhooksPath(admin.membershipId)}/_query`)
        .query({ sort: 'slug' })
        .set('Authorization', admin.auth)
        .send({ where: { event: 'UserDeleted', status: { $ne: 'passive' } }, select: { name: 1, 'request.url': 1, has_secret: 1 } });
      expect(query.status).toBe(200);
      expect(query.body.items).toEqual([{ _id: expect.any(String), name: 'a-hook', request: { url: 'https://example.com/2' }, has_secret: true }]);

      const byUrl = await t
        .http()
        .post(`${webhooksPath(admin.membershipId)}/_query`)
        .set('Authorization', admin.auth)
        .send({ where: { 'request.url': { $in: ['https://example.com/1', 'https://example.com/3'] } } });
      expect(byUrl.body.items.map((w: Json) => w.name).sort()).toEqual(['b-hook', 'c-hook']);

      for (const body of [
        { where: { secret: 'x' } },
        { select: { secret: 1 } },
        { where: { name: { $regex: '.*' } } },
        { where: { $where: 'true' } },
        { where: 'name = 1' },
        { extra: 1 },
      ]) {
        const bad = await t.http().post(`${webhooksPath(admin.membershipId)}/_query`).set('Authorization', admin.auth).send(body);
        expect(bad.status).toBe(400);
        expect(bad.body.errorCode).toBe('InvalidQuery');
      }
      const badSort = await t.http().get(webhooksPath(admin.membershipId)).query({ sort: 'secret' }).set('Authorization', admin.auth);
      expect(badSort.status).toBe(400);
      expect(badSort.body.errorCode).toBe('InvalidQuery');
    });

    it('applies webhooks.<action> permissions, with the id as object, and keeps memberships apart', async () => {
      const owner = await tenant();
      const other = await tenant();
      const hook = await createWebhook(t, owner.admin, 'https://example.com/a');
      const second = await createWebhook(t, owner.admin, 'https://example.com/b');
      const readerRole = await createRole(t, owner.admin, { permissions: ['webhooks.read'] });
      const reader = await createApplication(t, owner.admin, { role: readerRole.slug });
      const oneRole = await createRole(t, owner.admin, { permissions: [`webhooks.read.${hook._id}`, `webhooks.update.${hook._id}`] });
      const one = await createApplication(t, owner.admin, { role: oneRole.slug });
      const base = webhooksPath(owner.membershipId);

      expect((await t.http().get(base).set('Authorization', reader.basic)).status).toBe(200);
      expect((await t.http().get(`${base}/${hook._id}`).set('Authorization', reader.basic)).status).toBe(200);
      const create = await t.http().post(base).set('Authorization', reader.basic).send(webhookBody('https://example.com/x'));
      expect(create.status).toBe(403);
      expect(create.body.errorCode).toBe('AccessDenied');
      expect((await t.http().delete(`${base}/${hook._id}`).set('Authorization', reader.basic)).status).toBe(403);
      expect((await t.http().delete(base).set('Authorization', reader.basic).send({ ids: [hook._id] })).status).toBe(403);

      expect((await t.http().get(`${base}/${hook._id}`).set('Authorization', one.basic)).status).toBe(200);
      expect((await t.http().get(`${base}/${second._id}`).set('Authorization', one.basic)).status).toBe(403);
      expect((await t.http().get(base).set('Authorization', one.basic)).status).toBe(403);
      const put = await t.http().put(`${base}/${hook._id}`).set('Authorization', one.basic).send(webhookBody('https://example.com/changed', { name: 'changed' }));
      expect(put.status).toBe(200);
      const [updated] = await queryEvents(t, owner.admin, { event_type: 'WebhookUpdated', 'document._id': hook._id });
      expect(updated.utilizer_id).toBe(one.id);

      const foreign = await t.http().get(base).set('Authorization', other.admin.auth);
      expect(foreign.status).toBe(403);
      expect(foreign.body.errorCode).toBe('AccessDenied');
      expect((await t.http().get(base)).status).toBe(401);
    });
  });

  describe('delivery', () => {
    it('substitutes placeholders in URL, headers and body and sends {document, prior, payload}', async () => {
      const { admin } = await tenant();
      const p = path();
      const hook = await createWebhook(t, admin, receiver.url(`${p}/{{event_type}}/{{document._id}}?by={{utilizer_id}}&m={{membership_id}}&name={{document.firstname}}`), {
        request: {
          headers: { 'X-Event': '{{event_type}}', 'X-User': '{{document.username}}', 'X-Created-By': '{{document.sys.created_by}}' },
          body: { greeting: 'Hello {{document.firstname}} {{document.lastname}}', nested: { at: '{{event_time}}', list: ['{{document.email_address}}', 7] }, fixed: true },
        },
      });
      const user = await createUser(t, admin, { firstname: 'Ada & Co/?', lastname: 'Lovelace' });
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
      const events = await queryEvents(t, admin, { event_type: 'UserCreated', 'document._id': user._id });
      expect(request.json.payload).toEqual({
        greeting: 'Hello Ada & Co/? Lovelace',
        nested: { at: events[0].event_time, list: [user.email_address, 7] },
        fixed: true,
      });

      const [sent] = await waitForResults(t, admin, hook._id, 1);
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
      await createWebhook(t, admin, receiver.url(`${p}/uncovered`), { request: { uncoveredBody: true, body: { user: '{{document.username}}' } } });
      await createWebhook(t, admin, receiver.url(`${p}/get`), { request: { method: 'GET', body: { ignored: true } } });
      const user = await createUser(t, admin);
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
      await createWebhook(t, admin, receiver.url(`${p}/users?first={{document.firstname}}`), {
        request: { headers: { 'X-First': '{{document.firstname}}' }, body: { name: '{{document.firstname}}', role: 'user' } },
      });
      await createUser(t, admin, { firstname: hostile });
      const [request] = await receiver.waitForRequests(1, { path: `${p}/users` });
      expect(request.json.payload).toEqual({ name: hostile, role: 'user' });
      expect(request.json.admin).toBeUndefined();
      expect(request.json.payload.admin).toBeUndefined();
      expect(new URL(request.url, 'http://x').searchParams.get('first')).toBe(hostile);
      expect(request.url).not.toContain('"');
      expect(request.headers['x-first']).toBe(hostile);

      // A header whose value would contain CR LF is left out: the description of a new webhook
      // is free text and reaches the header of a webhook on WebhookCreated.
      const onCreated = await createWebhook(t, admin, receiver.url(`${p}/on-created`), {
        event: 'WebhookCreated',
        request: { headers: { 'X-Description': '{{document.description}}', 'X-Name': '{{document.name}}' } },
      });
      await createWebhook(t, admin, 'https://example.com/never', { status: 'passive', name: 'injector', description: 'line\r\nX-Injected: yes' });
      // Two calls: one for the creation of `onCreated` itself (no description), one for `injector`.
      const calls = await receiver.waitForRequests(2, { path: `${p}/on-created` });
      const created = calls.find((call) => call.headers['x-name'] === 'injector')!;
      expect(created).toBeDefined();
      expect(created.headers['x-description']).toBeUndefined();
      expect(created.headers['x-injected']).toBeUndefined();
      expect(created.json.document.description).toBe('line\r\nX-Injected: yes');
      const results = await waitForResults(t, admin, onCreated._id, 2);
      const skipped = results.find((result) => result.document.skipped_headers);
      expect(skipped?.document.skipped_headers).toEqual(['X-Description']);
      expect(skipped?.document.request.headers['X-Description']).toBeUndefined();
    });

    it('never calls passive webhooks', async () => {
      const { admin } = await tenant();
      const p = path();
      const passive = await createWebhook(t, admin, receiver.url(`${p}/passive`), { status: 'passive' });
      await createWebhook(t, admin, receiver.url(`${p}/active`));
      await createUser(t, admin);
      // The active webhook of the same event is called: by then the passive one would have been too.
      await receiver.waitForRequests(1, { path: `${p}/active` });
      await waitForResults(t, admin, (await queryEvents(t, admin, { event_type: 'WebhookCreated', 'document.status': 'active' }))[0].document._id, 1);
      expect(receiver.received(`${p}/passive`)).toHaveLength(0);
      expect(await queryEvents(t, admin, { 'document.webhook_id': passive._id })).toHaveLength(0);
    });

    it('retries at once after a failure: 500 then 200 gives two attempts, one Failed and one Sent event', async () => {
      const { admin } = await tenant();
      const p = path();
      receiver.answer(500, 200);
      const hook = await createWebhook(t, admin, receiver.url(`${p}/retry`), { try_count: 3 });
      await createUser(t, admin);
      const results = await waitForResults(t, admin, hook._id, 2);
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
      const hook = await createWebhook(t, admin, receiver.url(`${p}/down`), { try_count: 3 });
      try {
        await createUser(t, admin);
        const results = await waitForResults(t, admin, hook._id, 3);
        expect(results.map((e) => [e.event_type, e.document.attempt])).toEqual([
          ['WebhookRequestFailed', 1],
          ['WebhookRequestFailed', 2],
          ['WebhookRequestFailed', 3],
        ]);
        // Give a fourth attempt the time to show up, if there were one.
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(receiver.received(`${p}/down`)).toHaveLength(3);
        expect(await waitForResults(t, admin, hook._id, 3)).toHaveLength(3);
      } finally {
        receiver.answer(200);
      }
    });

    it('does not delay the request that caused the event when the receiver hangs; the attempt times out', async () => {
      const { admin } = await tenant();
      const p = path();
      receiver.answer('hang');
      // Triggered by webhook creation: a cheap request (no password hashing), so its own time is small.
      const hook = await createWebhook(t, admin, receiver.url(`${p}/hang`), { try_count: 2, event: 'WebhookCreated', name: 'hanging' });
      try {
        const started = Date.now();
        await createWebhook(t, admin, 'https://example.com/x', { status: 'passive' });
        const elapsed = Date.now() - started;
        // Two attempts: one for `hanging` itself, and the first of the trigger's; both hang.
        await receiver.waitForRequests(2, { path: `${p}/hang` });
        // Had the request waited for the call, it would have taken at least one timeout.
        expect(elapsed).toBeLessThan(TIMEOUT_MS);
        const results = await waitForResults(t, admin, hook._id, 4, 5000);
        expect(results).toHaveLength(4);
        expect(results.map((e) => e.document.attempt).sort()).toEqual([1, 1, 2, 2]);
        for (const result of results) {
          expect(result.event_type).toBe('WebhookRequestFailed');
          expect(result.document.response).toBeNull();
          expect(result.document.error).toMatch(/within 500 ms/);
        }
        // Other requests are served normally meanwhile.
        expect((await t.http().get('/ping')).status).toBe(200);
      } finally {
        receiver.answer(200);
      }
    });

    it('signs the body with the webhook secret (X-Webhook-Signature verifies)', async () => {
      const { admin } = await tenant();
      const p = path();
      const secret = 'whsec-0123456789abcdef';
      const hook = await createWebhook(t, admin, receiver.url(`${p}/signed`), { secret, request: { headers: { Authorization: 'Bearer receiver-credential-1' } } });
      await createUser(t, admin);
      const [request] = await receiver.waitForRequests(1, { path: `${p}/signed` });
      const header = request.headers['x-webhook-signature'] as string;
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      const now = Math.floor(Date.now() / 1000);
      expect(verifyWebhookSignature(secret, request.body, header, 300, now)).toBe(true);
      expect(verifyWebhookSignature('another-secret-value', request.body, header, 300, now)).toBe(false);
      expect(verifyWebhookSignature(secret, `${request.body} `, header, 300, now)).toBe(false);
      expect(request.headers.authorization).toBe('Bearer receiver-credential-1');

      // The result event shows the request with the credential masked, never the secret.
      const [sent] = await waitForResults(t, admin, hook._id, 1);
      expect(sent.document.request.headers.Authorization).toBe('[masked]');
      expect(JSON.stringify(sent)).not.toContain('receiver-credential-1');
      expect(JSON.stringify(sent)).not.toContain(secret);
    });

    it('records a failed attempt without sending anything when the URL does not render to a valid URL', async () => {
      const { admin } = await tenant();
      const p = path();
      // Valid as a template (a sample value renders to a valid host), invalid for a first name with a space.
      const hook = await createWebhook(t, admin, `http://{{document.firstname}}.localhost${p}`, { try_count: 3 });
      await createUser(t, admin, { firstname: 'not a host' });
      const [failed] = await waitForResults(t, admin, hook._id, 1);
      expect(failed.event_type).toBe('WebhookRequestFailed');
      expect(failed.document).toMatchObject({ webhook_id: hook._id, attempt: 1, response: null });
      expect(failed.document.error).toMatch(/could not be built/);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Rendering fails the same way each time: one attempt, not three.
      expect(await waitForResults(t, admin, hook._id, 1)).toHaveLength(1);
    });

    it('calls every active webhook of the event, and result events trigger nothing', async () => {
      const { admin } = await tenant();
      const p = path();
      await createWebhook(t, admin, receiver.url(`${p}/one`));
      await createWebhook(t, admin, receiver.url(`${p}/two`));
      await createWebhook(t, admin, receiver.url(`${p}/deleted-user`), { event: 'UserDeleted' });
      const user = await createUser(t, admin);
      await receiver.waitForRequests(1, { path: `${p}/one` });
      await receiver.waitForRequests(1, { path: `${p}/two` });
      expect(receiver.received(`${p}/deleted-user`)).toHaveLength(0);

      const del = await t.http().delete(`/memberships/${admin.membershipId}/users/${user._id}`).set('Authorization', admin.auth);
      expect(del.status).toBe(204);
      const [deleted] = await receiver.waitForRequests(1, { path: `${p}/deleted-user` });
      expect(deleted.json.document).toEqual({});
      expect(deleted.json.prior).toMatchObject({ _id: user._id });
      const sent = await eventually(async () => {
        const items = await queryEvents(t, admin, { event_type: 'WebhookRequestSent' });
        return items.length >= 3 ? items : undefined;
      }, 'three WebhookRequestSent events');
      expect(sent).toHaveLength(3);
    });

    it('a webhook created on this instance is used at once; a deleted one is not called any more', async () => {
      const { admin } = await tenant();
      const p = path();
      await createUser(t, admin); // warms this instance's lookup for UserCreated: no webhooks
      const hook = await createWebhook(t, admin, receiver.url(`${p}/fresh`));
      await createUser(t, admin);
      await receiver.waitForRequests(1, { path: `${p}/fresh` });
      expect((await t.http().delete(`${webhooksPath(admin.membershipId)}/${hook._id}`).set('Authorization', admin.auth)).status).toBe(204);
      const marker = await createWebhook(t, admin, receiver.url(`${p}/marker`));
      await createUser(t, admin);
      await receiver.waitForRequests(1, { path: `${p}/marker` });
      await waitForResults(t, admin, marker._id, 1);
      expect(receiver.received(`${p}/fresh`)).toHaveLength(1);
    });

    it('reports webhook calls and the webhook queue to the metrics', async () => {
      const { admin } = await tenant();
      const hook = await createWebhook(t, admin, receiver.url(`${path()}/metrics`));
      await createUser(t, admin);
      await waitForResults(t, admin, hook._id, 1);
      const metrics = await t.http().get('/metrics');
      expect(metrics.status).toBe(200);
      const lines = metrics.text.split('\n').filter((line) => !line.startsWith('#'));
      expect(lines.some((line) => line.includes('kind="webhook"') && line.includes('outcome="success"'))).toBe(true);
      expect(lines.some((line) => line.includes('queue="webhooks"'))).toBe(true);
    });

    it('lets events.read holders read result events only inside their membership', async () => {
      const { admin } = await tenant();
      const other = await tenant();
      const p = path();
      const hook = await createWebhook(t, admin, receiver.url(`${p}/own`));
      await createUser(t, admin);
      const [sent] = await waitForResults(t, admin, hook._id, 1);
      const foreign = await t.http().get(`${eventsPath(other.membershipId)}/${sent._id}`).set('Authorization', other.admin.auth);
      expect(foreign.status).toBe(404);
      expect(foreign.body.errorCode).toBe('EventNotFound');
    });
  });
});
