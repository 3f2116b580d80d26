import { createApplication, type CreatedMembership, createMembership, createRole, createWebhook, type Json, queryEvents, useInstallation, webhookBody, webhooksPath } from '../support/api';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

const TIMEOUT_MS = 500;

/** Webhooks: the management API (create, replace, delete, list, query, permissions). (Split by behaviour; see also webhooks-delivery.e2e-spec.ts.) */
describe('webhooks', () => {
  const suite = useInstallation({ env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), ...ALLOW_LOOPBACK_RECEIVERS } });

  /** Every test works in a membership of its own, so webhooks of one test never see another's events. */
  async function tenant(): Promise<CreatedMembership> {
    return createMembership(suite.t, suite.admin);
  }

  describe('API', () => {
    it('creates a webhook (201) with a slug, without the secret, and records WebhookCreated without it', async () => {
      const { admin } = await tenant();
      const secret = 'a-very-secret-signing-key-123';
      const res = await suite.t
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
      const get = await suite.t.http().get(`${webhooksPath(admin.membershipId)}/${res.body._id}`).set('Authorization', admin.auth);
      expect(get.status).toBe(200);
      expect(get.body).toEqual(res.body);
      expect(JSON.stringify(get.body)).not.toContain(secret);

      const [created] = await queryEvents(suite.t, admin, { event_type: 'WebhookCreated', 'document._id': res.body._id });
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
      const empty = await suite.t.http().post(webhooksPath(admin.membershipId)).set('Authorization', admin.auth).send({});
      expect(empty.status).toBe(400);
      expect(empty.body.errorCode).toBe('ModelValidationError');
      const fields = (empty.body.errors as { field: string }[]).map((e) => e.field);
      expect(fields).toEqual(expect.arrayContaining(['name', 'event', 'status', 'try_count', 'request']));

      const noMethodNoUrl = await suite.t
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
      const res = await suite.t.http().post(webhooksPath(admin.membershipId)).set('Authorization', admin.auth).send(webhookBody('https://example.com/h', overrides));
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
      expect((res.body.errors as { field: string }[]).map((e) => e.field)).toContain(field);
    });

    it('accepts every documented method, in any case, and placeholders in path, query, host label, headers and body', async () => {
      const { admin } = await tenant();
      for (const method of ['GET', 'post', 'Put', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']) {
        const hook = await createWebhook(suite.t, admin, 'https://{{membership_id}}.example.com/{{event_type}}?id={{document._id}}&by={{document.sys.created_by}}', {
          request: { method, headers: { 'X-Time': '{{ event_time }}' }, body: { a: ['{{prior.name}}', { b: '{{utilizer_id}}' }], n: 1 } },
        });
        expect(hook.request.method).toBe(method.toUpperCase());
      }
    });

    it('refuses a second webhook whose name gives the same slug: 409 WebhookAlreadyExists', async () => {
      const { admin } = await tenant();
      await createWebhook(suite.t, admin, 'https://example.com/a', { name: 'Order Hook' });
      const again = await suite.t.http().post(webhooksPath(admin.membershipId)).set('Authorization', admin.auth).send(webhookBody('https://example.com/b', { name: 'order hook' }));
      expect(again.status).toBe(409);
      expect(again.body.errorCode).toBe('WebhookAlreadyExists');
      // The same name in another membership is fine.
      const other = await tenant();
      await createWebhook(suite.t, other.admin, 'https://example.com/a', { name: 'Order Hook' });
    });

    it('replaces with PUT (WebhookUpdated with prior), answers 409 IdenticalDocumentError when nothing changes, keeps or removes the secret', async () => {
      const { admin } = await tenant();
      const hook = await createWebhook(suite.t, admin, 'https://example.com/a', {
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
      const identical = await suite.t.http().put(url).set('Authorization', admin.auth).send(sameBody);
      expect(identical.status).toBe(409);
      expect(identical.body.errorCode).toBe('IdenticalDocumentError');
      const sameSecret = await suite.t.http().put(url).set('Authorization', admin.auth).send({ ...sameBody, secret: 'sixteen-chars-or-more' });
      expect(sameSecret.status).toBe(409);

      const renamed = await suite.t.http().put(url).set('Authorization', admin.auth).send({ ...sameBody, name: 'Renamed Hook', status: 'passive', try_count: 4 });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ _id: hook._id, name: 'Renamed Hook', slug: 'renamed-hook', status: 'passive', try_count: 4, has_secret: true });
      expect(renamed.body.sys).toMatchObject({ created_by: admin.userId, modified_by: admin.userId, modified_at: expect.any(String) });

      const [updated] = await queryEvents(suite.t, admin, { event_type: 'WebhookUpdated', 'document._id': hook._id });
      expect(updated.prior).toMatchObject({ name: hook.name, status: 'active', try_count: 1 });
      expect(updated.document).toMatchObject({ name: 'Renamed Hook', status: 'passive', try_count: 4 });

      const removed = await suite.t.http().put(url).set('Authorization', admin.auth).send({ ...sameBody, name: 'Renamed Hook', status: 'passive', try_count: 4, secret: null });
      expect(removed.status).toBe(200);
      expect(removed.body.has_secret).toBe(false);
    });

    it('answers 404 WebhookNotFound for unknown ids and ids of another membership; 400 for an invalid PUT body', async () => {
      const { admin } = await tenant();
      const other = await tenant();
      const foreign = await createWebhook(suite.t, other.admin, 'https://example.com/a');
      for (const id of ['no-such-id', foreign._id]) {
        const get = await suite.t.http().get(`${webhooksPath(admin.membershipId)}/${id}`).set('Authorization', admin.auth);
        expect(get.status).toBe(404);
        expect(get.body.errorCode).toBe('WebhookNotFound');
        const put = await suite.t.http().put(`${webhooksPath(admin.membershipId)}/${id}`).set('Authorization', admin.auth).send(webhookBody('https://example.com/x'));
        expect(put.status).toBe(404);
        const del = await suite.t.http().delete(`${webhooksPath(admin.membershipId)}/${id}`).set('Authorization', admin.auth);
        expect(del.status).toBe(404);
      }
      const hook = await createWebhook(suite.t, admin, 'https://example.com/a');
      const bad = await suite.t.http().put(`${webhooksPath(admin.membershipId)}/${hook._id}`).set('Authorization', admin.auth).send({ name: 'x' });
      expect(bad.status).toBe(400);
      expect(bad.body.errorCode).toBe('ModelValidationError');
    });

    it('deletes one webhook (204, WebhookDeleted with prior and an empty document)', async () => {
      const { admin } = await tenant();
      const hook = await createWebhook(suite.t, admin, 'https://example.com/a', { secret: 'sixteen-chars-or-more' });
      const del = await suite.t.http().delete(`${webhooksPath(admin.membershipId)}/${hook._id}`).set('Authorization', admin.auth);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
      const get = await suite.t.http().get(`${webhooksPath(admin.membershipId)}/${hook._id}`).set('Authorization', admin.auth);
      expect(get.status).toBe(404);
      const [deleted] = await queryEvents(suite.t, admin, { event_type: 'WebhookDeleted', 'prior._id': hook._id });
      expect(deleted.document).toEqual({});
      expect(deleted.prior).toMatchObject({ _id: hook._id, name: hook.name, has_secret: true });
      expect(JSON.stringify(deleted)).not.toContain('sixteen-chars-or-more');
    });

    it('bulk-deletes: {deleted, not_found}, one WebhookDeleted per webhook, other memberships untouched', async () => {
      const { admin } = await tenant();
      const other = await tenant();
      const a = await createWebhook(suite.t, admin, 'https://example.com/a');
      const b = await createWebhook(suite.t, admin, 'https://example.com/b');
      const keep = await createWebhook(suite.t, admin, 'https://example.com/c');
      const foreign = await createWebhook(suite.t, other.admin, 'https://example.com/d');
      const res = await suite.t
        .http()
        .delete(webhooksPath(admin.membershipId))
        .set('Authorization', admin.auth)
        .send({ ids: [a._id, b._id, 'missing', foreign._id, a._id] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ deleted: [a._id, b._id], not_found: ['missing', foreign._id] });
      const events = await queryEvents(suite.t, admin, { event_type: 'WebhookDeleted' });
      expect(events.map((e) => e.prior._id).sort()).toEqual([a._id, b._id].sort());
      expect((await suite.t.http().get(`${webhooksPath(admin.membershipId)}/${keep._id}`).set('Authorization', admin.auth)).status).toBe(200);
      expect((await suite.t.http().get(`${webhooksPath(other.membershipId)}/${foreign._id}`).set('Authorization', other.admin.auth)).status).toBe(200);

      for (const body of [{}, { ids: [] }, { ids: 'x' }, { ids: [1] }, { ids: Array.from({ length: 1001 }, (_, i) => `id${i}`) }]) {
        const bad = await suite.t.http().delete(webhooksPath(admin.membershipId)).set('Authorization', admin.auth).send(body);
        expect(bad.status).toBe(400);
      }
    });

    it('lists and queries with where, dotted select, sort, limit and count; refuses the secret and unknown operators', async () => {
      const { admin } = await tenant();
      await createWebhook(suite.t, admin, 'https://example.com/1', { name: 'b-hook', event: 'UserCreated' });
      await createWebhook(suite.t, admin, 'https://example.com/2', { name: 'a-hook', event: 'UserDeleted', secret: 'sixteen-chars-or-more' });
      await createWebhook(suite.t, admin, 'https://example.com/3', { name: 'c-hook', event: 'UserDeleted', status: 'passive' });

      const list = await suite.t.http().get(webhooksPath(admin.membershipId)).query({ with_count: 'true' }).set('Authorization', admin.auth);
      expect(list.status).toBe(200);
      expect(list.body.count).toBe(3);
      expect(list.body.items.map((w: Json) => w.name)).toEqual(['b-hook', 'a-hook', 'c-hook']);
      expect(JSON.stringify(list.body)).not.toContain('sixteen-chars-or-more');

      const sorted = await suite.t.http().get(webhooksPath(admin.membershipId)).query({ sort: 'slug desc', limit: '2' }).set('Authorization', admin.auth);
      expect(sorted.body.items.map((w: Json) => w.slug)).toEqual(['c-hook', 'b-hook']);
      expect(sorted.body.count).toBeUndefined();

      const query = await suite.t
        .http()
        .post(`${webhooksPath(admin.membershipId)}/_query`)
        .query({ sort: 'slug' })
        .set('Authorization', admin.auth)
        .send({ where: { event: 'UserDeleted', status: { $ne: 'passive' } }, select: { name: 1, 'request.url': 1, has_secret: 1 } });
      expect(query.status).toBe(200);
      expect(query.body.items).toEqual([{ _id: expect.any(String), name: 'a-hook', request: { url: 'https://example.com/2' }, has_secret: true }]);

      const byUrl = await suite.t
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
        const bad = await suite.t.http().post(`${webhooksPath(admin.membershipId)}/_query`).set('Authorization', admin.auth).send(body);
        expect(bad.status).toBe(400);
        expect(bad.body.errorCode).toBe('InvalidQuery');
      }
      const badSort = await suite.t.http().get(webhooksPath(admin.membershipId)).query({ sort: 'secret' }).set('Authorization', admin.auth);
      expect(badSort.status).toBe(400);
      expect(badSort.body.errorCode).toBe('InvalidQuery');
    });

    it('applies webhooks.<action> permissions, with the id as object, and keeps memberships apart', async () => {
      const owner = await tenant();
      const other = await tenant();
      const hook = await createWebhook(suite.t, owner.admin, 'https://example.com/a');
      const second = await createWebhook(suite.t, owner.admin, 'https://example.com/b');
      const readerRole = await createRole(suite.t, owner.admin, { permissions: ['webhooks.read'] });
      const reader = await createApplication(suite.t, owner.admin, { role: readerRole.slug });
      const oneRole = await createRole(suite.t, owner.admin, { permissions: [`webhooks.read.${hook._id}`, `webhooks.update.${hook._id}`] });
      const one = await createApplication(suite.t, owner.admin, { role: oneRole.slug });
      const base = webhooksPath(owner.membershipId);

      expect((await suite.t.http().get(base).set('Authorization', reader.basic)).status).toBe(200);
      expect((await suite.t.http().get(`${base}/${hook._id}`).set('Authorization', reader.basic)).status).toBe(200);
      const create = await suite.t.http().post(base).set('Authorization', reader.basic).send(webhookBody('https://example.com/x'));
      expect(create.status).toBe(403);
      expect(create.body.errorCode).toBe('AccessDenied');
      expect((await suite.t.http().delete(`${base}/${hook._id}`).set('Authorization', reader.basic)).status).toBe(403);
      expect((await suite.t.http().delete(base).set('Authorization', reader.basic).send({ ids: [hook._id] })).status).toBe(403);

      expect((await suite.t.http().get(`${base}/${hook._id}`).set('Authorization', one.basic)).status).toBe(200);
      expect((await suite.t.http().get(`${base}/${second._id}`).set('Authorization', one.basic)).status).toBe(403);
      expect((await suite.t.http().get(base).set('Authorization', one.basic)).status).toBe(403);
      const put = await suite.t.http().put(`${base}/${hook._id}`).set('Authorization', one.basic).send(webhookBody('https://example.com/changed', { name: 'changed' }));
      expect(put.status).toBe(200);
      const [updated] = await queryEvents(suite.t, owner.admin, { event_type: 'WebhookUpdated', 'document._id': hook._id });
      expect(updated.utilizer_id).toBe(one.id);

      const foreign = await suite.t.http().get(base).set('Authorization', other.admin.auth);
      expect(foreign.status).toBe(403);
      expect(foreign.body.errorCode).toBe('AccessDenied');
      expect((await suite.t.http().get(base)).status).toBe(401);
    });
  });
});
