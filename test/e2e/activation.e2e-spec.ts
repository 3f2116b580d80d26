import { startTestApp, type TestApp } from '../support/app';
import { type ApiObject, type CreatedMembership, createMembership, eventually, expectErrorBody, putBodyOf, queryEvents, setupInstallation, signIn, unique } from '../support/api';
import { captureLog, type CapturedLog } from '../support/log-capture';
import { type CaughtMail, MailCatcher } from '../support/mail-catcher';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

const PASSWORD = 'a long enough password';

describe('self-activation under user_activation: passive (a real SMTP server on 127.0.0.1)', () => {
  let t: TestApp;
  let catcher: MailCatcher;
  let log: CapturedLog;
  let tenant: CreatedMembership;
  const tokens: string[] = [];

  const usersPath = (): string => `/memberships/${tenant.membershipId}/users`;
  const activate = (token: string) => t.http().post(`${usersPath()}/activate`).send({ activation_token: token });
  const mailsTo = (address: string): CaughtMail[] => catcher.mails.filter((mail) => mail.to.includes(address));

  beforeAll(async () => {
    catcher = await MailCatcher.start();
    log = captureLog('debug');
    t = await startTestApp({ env: ALLOW_LOOPBACK_RECEIVERS, logger: log.logger });
    const systemAdmin = (await setupInstallation(t)).admin;
    tenant = await createMembership(t, systemAdmin);
    const put = await t
      .http()
      .put(`/memberships/${tenant.membershipId}`)
      .set('Authorization', tenant.admin.auth)
      .send({
        name: tenant.membership.name,
        user_activation: 'passive',
        mail_providers: [{ slug: 'catcher', name: 'Catcher', type: 'smtp', host: '127.0.0.1', port: catcher.port, tls: 'none' }],
      });
    expect(put.status).toBe(200);
    const hook = await t
      .http()
      .post(`/memberships/${tenant.membershipId}/mailhooks`)
      .set('Authorization', tenant.admin.auth)
      .send({
        name: 'Activation',
        event: 'UserCreated',
        mail_provider: 'catcher',
        from_address: 'no-reply@example.com',
        mail_subject: 'Welcome to {{membership.name}}',
        mail_format: 'text',
        mail_template: 'Activate: https://app.example/activate?token={{activation_token}} (valid {{activation_token_expires_in}}s)',
        send_to_utilizer: true,
      });
    expect(hook.status).toBe(201);
  });

  afterAll(async () => {
    await t?.close();
    await catcher?.close();
  });

  /** Creates a user as the admin and reads the activation mail it gets. */
  async function createAndReadMail(body: Record<string, unknown> = {}): Promise<{ user: ApiObject; token: string; mail: CaughtMail }> {
    const username = unique('new');
    const email = `${username}@example.com`;
    const res = await t.http().post(usersPath()).set('Authorization', tenant.admin.auth).send({ username, email_address: email, password: PASSWORD, ...body });
    expect(res.status).toBe(201);
    const mail = await eventually(async () => mailsTo(email)[0], `mail to ${email}`, 10_000);
    const token = /token=(\S*) \(valid/.exec(mail.body)?.[1] ?? '';
    if (token) tokens.push(token);
    return { user: res.body, token, mail };
  }

  it('starts a user created without is_active inactive, mails it an activation token that activates it once', async () => {
    const { user, token, mail } = await createAndReadMail();
    expect(user.is_active).toBe(false);
    expect(token.split('.')).toHaveLength(3);
    expect(mail.body).toContain('(valid 259200s)');
    expectErrorBody(
      await t.http().post('/generate-token').set('X-Service-Alias', tenant.membershipId).send({ username: user.username, password: PASSWORD }),
      401,
      'UserInactive',
    );
    // Not an access token.
    expectErrorBody(await t.http().get('/me').set('Authorization', `Bearer ${token}`), 401, 'InvalidToken');

    const done = await activate(token);
    expect(done.status).toBe(204);
    await signIn(t, tenant.membershipId, user.username as string, PASSWORD);
    const updated = (await queryEvents(t, tenant.admin, { event_type: 'UserUpdated', 'document._id': user._id }))[0];
    expect(updated.utilizer_id).toBe(user._id);
    expect(updated.prior.is_active).toBe(false);
    expect(updated.document.is_active).toBe(true);
    // Single use.
    expectErrorBody(await activate(token), 401, 'InvalidToken');
  });

  it('refuses the activation token of a user an admin froze (401 InvalidToken), and of one an admin activated', async () => {
    const frozen = await createAndReadMail();
    expect((await t.http().post(`${usersPath()}/${frozen.user._id}/freeze`).set('Authorization', tenant.admin.auth)).status).toBe(200);
    expectErrorBody(await activate(frozen.token), 401, 'InvalidToken');
    const again = await t.http().get(`${usersPath()}/${frozen.user._id}`).set('Authorization', tenant.admin.auth);
    expect(again.body.is_active).toBe(false);

    const activated = await createAndReadMail();
    expect((await t.http().post(`${usersPath()}/${activated.user._id}/activate`).set('Authorization', tenant.admin.auth)).status).toBe(200);
    expectErrorBody(await activate(activated.token), 401, 'InvalidToken');

    // An admin's PUT that says is_active ends it too, even when it keeps the user inactive.
    const put = await createAndReadMail();
    const replaced = await t
      .http()
      .put(`${usersPath()}/${put.user._id}`)
      .set('Authorization', tenant.admin.auth)
      .send(putBodyOf(put.user, { firstname: 'Renamed', is_active: false }));
    expect(replaced.status).toBe(200);
    expectErrorBody(await activate(put.token), 401, 'InvalidToken');
  });

  it('gives no activation to a user created with is_active given, and refuses a reset-typed or foreign token', async () => {
    const explicit = await createAndReadMail({ is_active: false });
    expect(explicit.user.is_active).toBe(false);
    expect(explicit.token).toBe('');
    expectErrorBody(await activate('not.a.token'), 401, 'InvalidToken');
    expectErrorBody(await activate(tenant.admin.accessToken), 401, 'InvalidToken');
    expectErrorBody(await t.http().post(`${usersPath()}/activate`).send({}), 400, 'ModelValidationError');
    expectErrorBody(await t.http().post('/memberships/unknown/users/activate').send({ activation_token: 'a.b.c' }), 404, 'MembershipNotFound');
  });

  it('keeps activation tokens out of events and log lines', async () => {
    expect(tokens.length).toBeGreaterThanOrEqual(3);
    const events = JSON.stringify(await queryEvents(t, tenant.admin, {}, { limit: '1000' }));
    for (const token of tokens) {
      expect(events).not.toContain(token);
      expect(log.text()).not.toContain(token);
    }
  });
});
