import { type ApiObject, createApplicationWithPermissions, createMailhook, type CreatedMembership, createMembership, createUser, eventually, expectErrorBody, loopbackSmtpProvider, queryEvents, type SignedIn, unique, updateMembership, useInstallation } from '../support/api';
import { useMailCatcher } from '../support/mail-catcher';
import { closedPort } from '../support/ports';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

const TRY_COUNT = 3;

describe('mail delivery (a real SMTP server on 127.0.0.1)', () => {
  const suite = useInstallation({ env: { ...ALLOW_LOOPBACK_RECEIVERS, MAIL_TRY_COUNT: String(TRY_COUNT), MAIL_TIMEOUT_MS: '5000' } });
  // Addresses tell the catcher how to answer RCPT TO: busy-once gets one 451, busy gets 451 always, refused gets 550.
  const catcher = useMailCatcher({
    reply: (address, attempt) => {
      if (address.startsWith('busy-once') && attempt === 1) return { code: 451, message: 'Try again later' };
      if (address.startsWith('busy-')) return address.startsWith('busy-once') ? undefined : { code: 451, message: 'Mailbox busy' };
      if (address.startsWith('refused-')) return { code: 550, message: 'No such user' };
      return undefined;
    },
  });

  /** A membership whose provider is the catcher, with one mail hook on UserCreated. */
  async function tenantWithHook(hook: ApiObject): Promise<{ tenant: CreatedMembership; hookId: string }> {
    const tenant = await createMembership(suite.t, suite.admin);
    await updateMembership(suite.t, tenant, { mail_providers: [loopbackSmtpProvider(catcher.port)] });
    const created = await createMailhook(suite.t, tenant.admin, {
      name: 'Welcome',
      event: 'UserCreated',
      from_name: 'Accounts',
      mail_subject: 'Welcome {{user.username}} to {{membership.name}}',
      mail_template: '<p>Hello <b>{{user.firstname}}</b></p>',
      ...hook,
    });
    return { tenant, hookId: created._id as string };
  }

  const queryEventsOf = (admin: SignedIn, where: Record<string, unknown>): Promise<ApiObject[]> => queryEvents(suite.t, admin, where);

  /** The result events of one hook, once there are at least `count`. */
  function results(tenant: CreatedMembership, hookId: string, count: number): Promise<ApiObject[]> {
    return eventually(
      async () => {
        const items = await queryEventsOf(tenant.admin, { event_type: { $in: ['MailhookMailSent', 'MailhookMailFailed'] }, 'document.mailhook_id': hookId });
        return items.length >= count ? items : undefined;
      },
      `${count} mail results`,
      15_000,
    );
  }

  it('sends one message per recipient (To holds only that address), escapes a hostile first name in HTML, records MailhookMailSent each', async () => {
    const ops = `${unique('ops')}@example.com`;
    const { tenant, hookId } = await tenantWithHook({ send_to_utilizer: true, recipients: [{ display_name: 'Ops', email_address: ops }] });
    const hostile = `<script>alert("x")</script>&'`;
    const user = await createUser(suite.t, tenant.admin, { firstname: hostile });

    const events = await results(tenant, hookId, 2);
    expect(events.map((event) => event.event_type)).toEqual(['MailhookMailSent', 'MailhookMailSent']);
    const recipients = events.map((event) => event.document.recipients[0].email_address).sort();
    expect(recipients).toEqual([ops, user.email_address].sort());
    for (const event of events) {
      expect(event.utilizer_id).toBe('system');
      expect(event.document).toEqual({ mailhook_id: hookId, event_id: expect.any(String), mail_provider: 'catcher', recipients: [expect.any(Object)], attempts: 1 });
    }

    const [toUser] = catcher.mailsTo(user.email_address);
    expect(catcher.mailsTo(user.email_address)).toHaveLength(1);
    expect(toUser.to).toEqual([user.email_address]);
    expect(toUser.headers.to).toContain(user.email_address);
    expect(toUser.headers.to).not.toContain(ops);
    expect(toUser.headers.subject).toBe(`Welcome ${user.username} to ${tenant.membership.name}`);
    expect(toUser.headers.from).toContain('no-reply@example.com');
    expect(toUser.body).toBe('<p>Hello <b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</b></p>');
    expect(toUser.body).not.toContain('<script>');

    const [toOps] = catcher.mailsTo(ops);
    expect(catcher.mailsTo(ops)).toHaveLength(1);
    expect(toOps.to).toEqual([ops]);
    expect(toOps.headers.to).not.toContain(user.email_address);
  });

  it('sends the template raw when mail_format is text', async () => {
    const { tenant } = await tenantWithHook({ send_to_utilizer: true, mail_format: 'text', mail_template: 'Hello {{user.firstname}}' });
    const user = await createUser(suite.t, tenant.admin, { firstname: '<b>Ada</b>' });
    const mail = await eventually(async () => catcher.mailsTo(user.email_address)[0], 'the text mail', 15_000);
    expect(mail.headers['content-type']).toContain('text/plain');
    expect(mail.body).toBe('Hello <b>Ada</b>');
  });

  it('retries after an SMTP 4xx and records MailhookMailSent with the attempts it took', async () => {
    const address = `${unique('busy-once')}@example.com`;
    const { tenant, hookId } = await tenantWithHook({ send_to_utilizer: false, recipients: [{ email_address: address }] });
    await createUser(suite.t, tenant.admin);
    const [event] = await results(tenant, hookId, 1);
    expect(event.event_type).toBe('MailhookMailSent');
    expect(event.document.attempts).toBe(2);
    expect(catcher.rcptAttempts.get(address)).toBe(2);
    expect(catcher.mailsTo(address)).toHaveLength(1);
  });

  it('records MailhookMailFailed with the SMTP answer after the last try of a lasting 4xx', async () => {
    const address = `${unique('busy-always')}@example.com`;
    const { tenant, hookId } = await tenantWithHook({ send_to_utilizer: false, recipients: [{ email_address: address }] });
    await createUser(suite.t, tenant.admin);
    const [event] = await results(tenant, hookId, 1);
    expect(event.event_type).toBe('MailhookMailFailed');
    expect(event.document.attempts).toBe(TRY_COUNT);
    expect(event.document.error).toMatch(/^451 /);
    expect(catcher.rcptAttempts.get(address)).toBe(TRY_COUNT);
    expect(catcher.mailsTo(address)).toHaveLength(0);
  });

  it('does not retry an SMTP 5xx', async () => {
    const address = `${unique('refused')}@example.com`;
    const { tenant, hookId } = await tenantWithHook({ send_to_utilizer: false, recipients: [{ email_address: address }] });
    await createUser(suite.t, tenant.admin);
    const [event] = await results(tenant, hookId, 1);
    expect(event.event_type).toBe('MailhookMailFailed');
    expect(event.document.attempts).toBe(1);
    expect(event.document.error).toMatch(/^550 /);
    expect(catcher.rcptAttempts.get(address)).toBe(1);
  });

  it('sends nothing for an inactive hook', async () => {
    const address = `${unique('inactive')}@example.com`;
    const { tenant, hookId } = await tenantWithHook({ is_active: false, send_to_utilizer: false, recipients: [{ email_address: address }] });
    // An active hook on the same event: its result proves the event was dispatched before we look.
    const witness = await createMailhook(suite.t, tenant.admin, { name: 'Witness', event: 'UserCreated', mail_subject: 'x', mail_template: 'x', recipients: [{ email_address: `${unique('witness')}@example.com` }] });
    await createUser(suite.t, tenant.admin);
    await results(tenant, witness._id as string, 1);
    expect(await queryEventsOf(tenant.admin, { 'document.mailhook_id': hookId, event_type: { $in: ['MailhookMailSent', 'MailhookMailFailed'] } })).toEqual([]);
    expect(catcher.mailsTo(address)).toHaveLength(0);
  });

  describe('POST /memberships/{m}/mail-providers/{slug}/test', () => {
    const testPath = (tenant: CreatedMembership, slug: string): string => `/memberships/${tenant.membershipId}/mail-providers/${slug}/test`;

    it('answers {ok: true} after connecting to the server, and sends no mail', async () => {
      const { tenant } = await tenantWithHook({ send_to_utilizer: true });
      const mailsBefore = catcher.mails.length;
      const res = await suite.t.http().post(testPath(tenant, 'catcher')).set('Authorization', tenant.admin.auth);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: true });
      expect(catcher.mails.length).toBe(mailsBefore);
    });

    it('answers {ok: false, error} when nothing answers on the port', async () => {
      // A port that was just free on loopback: the connection is refused.
      const tenant = await createMembership(suite.t, suite.admin);
      await updateMembership(suite.t, tenant, { mail_providers: [loopbackSmtpProvider(await closedPort(), 'gone')] });
      const res = await suite.t.http().post(testPath(tenant, 'gone')).set('Authorization', tenant.admin.auth);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ok: false, error: expect.stringContaining('ECONNREFUSED') });
      expect(res.body.error.length).toBeLessThanOrEqual(500);
    });

    it('answers 404 MailProviderNotFound for an unknown slug and 403 without memberships.update', async () => {
      const { tenant } = await tenantWithHook({ send_to_utilizer: true });
      expectErrorBody(await suite.t.http().post(testPath(tenant, 'nope')).set('Authorization', tenant.admin.auth), 404, 'MailProviderNotFound');
      const reader = await createApplicationWithPermissions(suite.t, tenant.admin, ['mailhooks.read']);
      expectErrorBody(await suite.t.http().post(testPath(tenant, 'catcher')).set('Authorization', reader.basic), 403, 'AccessDenied');
    });
  });
});

/**
 * Messages wait in the mail queue (4 sent at a time) with the hook as it was when the event
 * committed. A hook made inactive or deleted meanwhile must send no more: "inactive hooks are
 * kept, never sent".
 */
describe('mail queued in memory (a slow SMTP server on 127.0.0.1)', () => {
  const suite = useInstallation({ env: { ...ALLOW_LOOPBACK_RECEIVERS, MAIL_TRY_COUNT: '1', MAIL_TIMEOUT_MS: '5000' } });
  const catcher = useMailCatcher({ rcptDelayMs: 1500 });

  /** A hook on UserCreated mailing 8 recipients, and a user created: 4 messages in flight (the queue's concurrency), held at RCPT TO; 4 wait in the queue. */
  async function hookWithQueuedMessages(prefix: string, template: string) {
    const tenant = await createMembership(suite.t, suite.admin);
    await updateMembership(suite.t, tenant, { mail_providers: [loopbackSmtpProvider(catcher.port)] });
    const recipients = Array.from({ length: 8 }, () => ({ email_address: `${unique(prefix)}@example.com` }));
    const body = { name: unique(prefix), mail_provider: 'catcher', from_address: 'no-reply@example.com', event: 'UserCreated', mail_subject: template, mail_template: template, recipients };
    const hook = await createMailhook(suite.t, tenant.admin, body);
    await createUser(suite.t, tenant.admin);
    await eventually(async () => (recipients.filter((r) => catcher.rcptAttempts.has(r.email_address)).length >= 4 ? true : undefined), '4 messages in flight');
    return { tenant, recipients, body, hook };
  }

  for (const change of ['made inactive', 'deleted'] as const) {
    it(`sends no queued message of a hook ${change} while it waited`, async () => {
      const { tenant, recipients, body, hook } = await hookWithQueuedMessages('queued', 'x');
      const hookPath = `/memberships/${tenant.membershipId}/mailhooks/${hook._id as string}`;
      if (change === 'deleted') await suite.t.http().delete(hookPath).set('Authorization', tenant.admin.auth).expect(204);
      else await suite.t.http().put(hookPath).set('Authorization', tenant.admin.auth).send({ ...body, name: hook.name, is_active: false }).expect(200);
      // The 4 in flight end 1.5 s after their RCPT TO; queued ones would reach RCPT TO then.
      await new Promise((resolve) => setTimeout(resolve, 3500));
      expect(recipients.filter((r) => catcher.rcptAttempts.has(r.email_address)).length).toBe(4);
    });
  }

  it('sends a queued message with its hook as it is when sent: the new template, and none to a recipient removed', async () => {
    const { tenant, recipients, body, hook } = await hookWithQueuedMessages('changed', 'old');
    const waiting = recipients.filter((r) => !catcher.rcptAttempts.has(r.email_address));
    expect(waiting).toHaveLength(4);
    // The first waiting recipient leaves the hook; the template and subject change.
    const kept = recipients.filter((r) => r !== waiting[0]);
    const hookPath = `/memberships/${tenant.membershipId}/mailhooks/${hook._id as string}`;
    await suite.t.http().put(hookPath).set('Authorization', tenant.admin.auth).send({ ...body, name: hook.name, recipients: kept, mail_subject: 'new subject', mail_template: 'new template' }).expect(200);
    await eventually(async () => (waiting.slice(1).every((r) => catcher.mailsTo(r.email_address).length) ? true : undefined), 'the 3 waiting messages sent', 15_000);
    for (const recipient of waiting.slice(1)) {
      const [sent] = catcher.mailsTo(recipient.email_address);
      expect([sent.headers.subject, sent.body.trim()]).toEqual(['new subject', 'new template']);
    }
    expect(catcher.rcptAttempts.has(waiting[0].email_address)).toBe(false);
  });
});
