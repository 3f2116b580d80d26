import { startTestApp, type TestApp } from '../support/app';
import { type ApiObject, createApplicationWithPermissions, type CreatedMembership, createMembership, createWebhook, expectErrorBody, mailhooksPath, queryEvents, setupInstallation, type SignedIn, webhookBody, webhooksPath } from '../support/api';

const RELAY_PASSWORD = 'relay-password-never-shown-9f2c';

function relay(overrides: ApiObject = {}): ApiObject {
  return { slug: 'relay', name: 'Relay', type: 'smtp', host: 'smtp.example.com', tls: 'starttls', username: 'mailer', password: RELAY_PASSWORD, ...overrides };
}

function resetHook(overrides: ApiObject = {}): ApiObject {
  return {
    name: 'Reset mail',
    event: 'UserPasswordReset',
    mail_provider: 'relay',
    from_address: 'no-reply@example.com',
    from_name: 'Accounts',
    mail_subject: 'Reset your password, {{user.firstname}}',
    mail_template: '<p>Hello {{user.firstname}}, your link: https://app.example.com/reset?token={{reset_token}} ({{reset_token_expires_in}} s)</p>',
    send_to_utilizer: true,
    ...overrides,
  };
}

describe('mail providers and mail hooks', () => {
  let t: TestApp;
  let systemAdmin: SignedIn;

  beforeAll(async () => {
    t = await startTestApp();
    systemAdmin = (await setupInstallation(t)).admin;
  });
  afterAll(async () => {
    await t?.close();
  });

  async function putProviders(tenant: CreatedMembership, providers: ApiObject[] | undefined): Promise<import('supertest').Response> {
    const body: ApiObject = { name: tenant.membership.name };
    if (providers !== undefined) body.mail_providers = providers;
    return t.http().put(`/memberships/${tenant.membershipId}`).set('Authorization', tenant.admin.auth).send(body);
  }

  /** A membership of its own with the relay provider set. */
  async function tenantWithRelay(): Promise<CreatedMembership> {
    const tenant = await createMembership(t, systemAdmin);
    const res = await putProviders(tenant, [relay()]);
    if (res.status !== 200) throw new Error(`PUT mail_providers: ${res.status} ${JSON.stringify(res.body)}`);
    return tenant;
  }

  describe('membership mail_providers', () => {
    it('stores the password write-only: answers carry has_password, never the password; omitted keeps it, null clears it', async () => {
      const tenant = await createMembership(t, systemAdmin);
      const set = await putProviders(tenant, [relay()]);
      expect(set.status).toBe(200);
      expect(set.body.mail_providers).toEqual([
        { slug: 'relay', name: 'Relay', type: 'smtp', host: 'smtp.example.com', port: null, tls: 'starttls', username: 'mailer', has_password: true },
      ]);
      expect(JSON.stringify(set.body)).not.toContain(RELAY_PASSWORD);

      const get = await t.http().get(`/memberships/${tenant.membershipId}`).set('Authorization', tenant.admin.auth);
      expect(get.body.mail_providers[0].has_password).toBe(true);
      expect(JSON.stringify(get.body)).not.toContain(RELAY_PASSWORD);
      const list = await t.http().get('/memberships').set('Authorization', systemAdmin.auth);
      expect(JSON.stringify(list.body)).not.toContain(RELAY_PASSWORD);

      // A PUT that omits mail_providers keeps them (a new name would change the issuer, so another setting changes).
      const renamed = await t.http().put(`/memberships/${tenant.membershipId}`).set('Authorization', tenant.admin.auth).send({ name: tenant.membership.name, expires_in: 7200 });
      expect(renamed.status).toBe(200);
      expect(renamed.body.expires_in).toBe(7200);
      expect(renamed.body.mail_providers[0].has_password).toBe(true);

      // An entry without password keeps the stored one of its slug, while it goes to the same server.
      const { password: _omitted, ...withoutPassword } = relay({ name: 'Relay renamed' });
      const kept = await t.http().put(`/memberships/${tenant.membershipId}`).set('Authorization', tenant.admin.auth).send({ name: renamed.body.name, mail_providers: [withoutPassword] });
      expect(kept.status).toBe(200);
      expect(kept.body.mail_providers[0]).toMatchObject({ name: 'Relay renamed', has_password: true });

      const cleared = await t
        .http()
        .put(`/memberships/${tenant.membershipId}`)
        .set('Authorization', tenant.admin.auth)
        .send({ name: renamed.body.name, mail_providers: [{ ...withoutPassword, password: null }] });
      expect(cleared.status).toBe(200);
      expect(cleared.body.mail_providers[0].has_password).toBe(false);
    });

    it.each([
      ['an unknown type', [relay({ type: 'ses' })], 'mail_providers.0.type'],
      ['an unknown tls mode', [relay({ tls: 'maybe' })], 'mail_providers.0.tls'],
      ['a port out of range', [relay({ port: 70000 })], 'mail_providers.0.port'],
      ['a duplicate slug', [relay(), relay({ name: 'Other' })], 'mail_providers.1.slug'],
      ['a loopback IP literal', [relay({ host: '127.0.0.1' })], 'mail_providers.0.host'],
      ['a private IP literal in another notation', [relay({ host: '0x0a000005' })], 'mail_providers.0.host'],
      ['localhost', [relay({ host: 'localhost' })], 'mail_providers.0.host'],
      ['more than 10 entries', Array.from({ length: 11 }, (_, i) => relay({ slug: `r${i}` })), 'mail_providers'],
    ])('refuses %s with 400 ModelValidationError naming the field', async (_what, providers, field) => {
      const tenant = await createMembership(t, systemAdmin);
      const res = await putProviders(tenant, providers);
      expectErrorBody(res, 400, 'ModelValidationError');
      expect(res.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    });

    it('refuses to remove a provider a mail hook names (409 MailProviderInUse), allows it once the hook is gone', async () => {
      const tenant = await tenantWithRelay();
      const hook = await t.http().post(mailhooksPath(tenant.membershipId)).set('Authorization', tenant.admin.auth).send(resetHook());
      expect(hook.status).toBe(201);
      expectErrorBody(await putProviders(tenant, []), 409, 'MailProviderInUse');
      expect((await t.http().delete(`${mailhooksPath(tenant.membershipId)}/${hook.body._id}`).set('Authorization', tenant.admin.auth)).status).toBe(204);
      const removed = await putProviders(tenant, []);
      expect(removed.status).toBe(200);
      expect(removed.body.mail_providers).toEqual([]);
    });
  });

  describe('mail hooks API', () => {
    it('creates (201) with a generated slug and defaults, reads it back, records MailhookCreated with the hook as document', async () => {
      const tenant = await tenantWithRelay();
      const res = await t.http().post(mailhooksPath(tenant.membershipId)).set('Authorization', tenant.admin.auth).send(resetHook({ name: 'Reset Mail!' }));
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        _id: expect.any(String),
        name: 'Reset Mail!',
        slug: 'reset-mail',
        description: null,
        event: 'UserPasswordReset',
        is_active: true,
        mail_provider: 'relay',
        from_address: 'no-reply@example.com',
        from_name: 'Accounts',
        mail_subject: 'Reset your password, {{user.firstname}}',
        mail_format: 'html',
        mail_template: resetHook().mail_template,
        send_to_utilizer: true,
        recipients: [],
        membership_id: tenant.membershipId,
        sys: { created_at: expect.any(String), created_by: tenant.admin.userId },
      });
      const get = await t.http().get(`${mailhooksPath(tenant.membershipId)}/${res.body._id}`).set('Authorization', tenant.admin.auth);
      expect(get.status).toBe(200);
      expect(get.body).toEqual(res.body);

      const [created] = await queryEvents(t, tenant.admin, { event_type: 'MailhookCreated', 'document._id': res.body._id });
      expect(created.utilizer_id).toBe(tenant.admin.userId);
      expect(created.prior).toBeNull();
      expect(created.document).toEqual(res.body);

      const again = await t.http().post(mailhooksPath(tenant.membershipId)).set('Authorization', tenant.admin.auth).send(resetHook({ name: 'reset mail' }));
      expectErrorBody(again, 409, 'MailhookAlreadyExists');
    });

    it('replaces with PUT (MailhookUpdated with prior), 409 IdenticalDocumentError when nothing changes, deletes (MailhookDeleted with prior)', async () => {
      const tenant = await tenantWithRelay();
      const base = mailhooksPath(tenant.membershipId);
      const hook = (await t.http().post(base).set('Authorization', tenant.admin.auth).send(resetHook())).body as ApiObject;
      const replaced = await t.http().put(`${base}/${hook._id}`).set('Authorization', tenant.admin.auth).send(resetHook({ is_active: false, mail_format: 'text' }));
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({ is_active: false, mail_format: 'text', sys: { modified_by: tenant.admin.userId } });
      const [updated] = await queryEvents(t, tenant.admin, { event_type: 'MailhookUpdated', 'document._id': hook._id });
      expect(updated.prior.is_active).toBe(true);
      expect(updated.document.is_active).toBe(false);

      const identical = await t.http().put(`${base}/${hook._id}`).set('Authorization', tenant.admin.auth).send(resetHook({ is_active: false, mail_format: 'text' }));
      expectErrorBody(identical, 409, 'IdenticalDocumentError');

      expect((await t.http().delete(`${base}/${hook._id}`).set('Authorization', tenant.admin.auth)).status).toBe(204);
      expectErrorBody(await t.http().get(`${base}/${hook._id}`).set('Authorization', tenant.admin.auth), 404, 'MailhookNotFound');
      expectErrorBody(await t.http().delete(`${base}/${hook._id}`).set('Authorization', tenant.admin.auth), 404, 'MailhookNotFound');
      const [deleted] = await queryEvents(t, tenant.admin, { event_type: 'MailhookDeleted', 'prior._id': hook._id });
      expect(deleted.document).toEqual({});
      expect(deleted.prior.slug).toBe('reset-mail');
    });

    it('lists, queries with where/select, and bulk-deletes ({deleted, not_found}, one MailhookDeleted each)', async () => {
      const tenant = await tenantWithRelay();
      const base = mailhooksPath(tenant.membershipId);
      const created: ApiObject[] = [];
      for (const name of ['one', 'two', 'three']) {
        const res = await t
          .http()
          .post(base)
          .set('Authorization', tenant.admin.auth)
          .send(resetHook({ name, event: 'UserCreated', mail_subject: 'Welcome', mail_template: 'Hi {{user.username}}', send_to_utilizer: false, recipients: [{ email_address: 'ops@example.com' }], is_active: name !== 'two' }));
        expect(res.status).toBe(201);
        created.push(res.body);
      }
      const list = await t.http().get(base).set('Authorization', tenant.admin.auth);
      expect(list.status).toBe(200);
      expect(list.body.items.map((item: ApiObject) => item.slug)).toEqual(['one', 'two', 'three']);

      const query = await t.http().post(`${base}/_query`).set('Authorization', tenant.admin.auth).send({ where: { is_active: false }, select: { slug: 1 } });
      expect(query.status).toBe(200);
      expect(query.body.items).toEqual([{ _id: created[1]._id, slug: 'two' }]);

      const missing = '00000000-0000-4000-8000-000000000000';
      const bulk = await t.http().delete(base).set('Authorization', tenant.admin.auth).send({ ids: [created[0]._id, created[2]._id, missing] });
      expect(bulk.status).toBe(200);
      expect(bulk.body).toEqual({ deleted: [created[0]._id, created[2]._id], not_found: [missing] });
      const deletions = await queryEvents(t, tenant.admin, { event_type: 'MailhookDeleted' });
      expect(deletions.map((event) => event.prior._id).sort()).toEqual([created[0]._id, created[2]._id].sort());
    });

    it.each([
      ['an unknown mail provider', { mail_provider: 'nope' }, 'mail_provider'],
      ['a result event', { event: 'MailhookMailSent' }, 'event'],
      ['an unknown event', { event: 'Nope' }, 'event'],
      ['no recipient and send_to_utilizer false', { send_to_utilizer: false, mail_template: 'hi' }, 'recipients'],
      ['an unknown placeholder', { mail_template: 'hi {{secret_key}}' }, 'mail_template'],
      ['a mail-only value on another event', { event: 'UserCreated', mail_template: '{{reset_token}}' }, 'mail_template'],
      ['an activation token on UserPasswordReset', { mail_template: '{{activation_token}}' }, 'mail_template'],
      ['a mail-only value in the subject', { mail_subject: 'Your code {{otp}}' }, 'mail_subject'],
      ['a mail-only value with fixed recipients', { recipients: [{ email_address: 'audit@example.com' }] }, 'mail_template'],
      ['a mail-only value with send_to_utilizer false', { send_to_utilizer: false, recipients: [{ email_address: 'audit@example.com' }] }, 'mail_template'],
      ['a subject over 998 characters', { mail_subject: 'x'.repeat(999) }, 'mail_subject'],
      ['a template over 64 KiB', { mail_template: 'x'.repeat(64 * 1024 + 1) }, 'mail_template'],
      ['a from_name with a line break', { from_name: 'Accounts\r\nBcc: all@example.com' }, 'from_name'],
      ['a from_address that is no address', { from_address: 'not an address' }, 'from_address'],
      ['a recipient display name with a placeholder', { send_to_utilizer: false, mail_template: 'hi', recipients: [{ display_name: '{{user.email}}', email_address: 'a@example.com' }] }, 'recipients.0.display_name'],
      ['an unknown mail format', { mail_format: 'rtf' }, 'mail_format'],
    ])('refuses %s at create with 400 ModelValidationError naming the field', async (_what, overrides, field) => {
      const tenant = await tenantWithRelay();
      const res = await t.http().post(mailhooksPath(tenant.membershipId)).set('Authorization', tenant.admin.auth).send(resetHook(overrides));
      expectErrorBody(res, 400, 'ModelValidationError');
      expect(res.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    });

    it('refuses a mail-only value placed in a webhook at create', async () => {
      const tenant = await createMembership(t, systemAdmin);
      for (const placeholder of ['reset_token', 'otp', 'activation_token']) {
        const res = await t
          .http()
          .post(webhooksPath(tenant.membershipId))
          .set('Authorization', tenant.admin.auth)
          .send(webhookBody('https://example.com/hook', { event: 'UserPasswordReset', request: { method: 'POST', url: 'https://example.com/hook', body: { value: `{{${placeholder}}}` } } }));
        expectErrorBody(res, 400, 'ModelValidationError');
      }
      // The same webhook with a webhook placeholder is accepted, so the refusal is the value's.
      await createWebhook(t, tenant.admin, 'https://example.com/hook', { event: 'UserPasswordReset', request: { method: 'POST', url: 'https://example.com/hook', body: { value: '{{document._id}}' } } });
    });

    it('checks mailhooks.<action> permissions per route and keeps memberships apart', async () => {
      const tenant = await tenantWithRelay();
      const other = await tenantWithRelay();
      const base = mailhooksPath(tenant.membershipId);
      const hook = (await t.http().post(base).set('Authorization', tenant.admin.auth).send(resetHook())).body as ApiObject;
      const reader = await createApplicationWithPermissions(t, tenant.admin, ['mailhooks.read']);
      expect((await t.http().get(`${base}/${hook._id}`).set('Authorization', reader.basic)).status).toBe(200);
      expect((await t.http().post(base).set('Authorization', reader.basic).send(resetHook({ name: 'x' }))).status).toBe(403);
      expect((await t.http().put(`${base}/${hook._id}`).set('Authorization', reader.basic).send(resetHook({ name: 'x' }))).status).toBe(403);
      expect((await t.http().delete(`${base}/${hook._id}`).set('Authorization', reader.basic)).status).toBe(403);
      expect((await t.http().delete(base).set('Authorization', reader.basic).send({ ids: [hook._id] })).status).toBe(403);
      // Another membership's admin sees nothing of this one.
      expect((await t.http().get(`${base}/${hook._id}`).set('Authorization', other.admin.auth)).status).toBe(403);
      expectErrorBody(await t.http().get(`${mailhooksPath(other.membershipId)}/${hook._id}`).set('Authorization', other.admin.auth), 404, 'MailhookNotFound');
    });
  });
});
