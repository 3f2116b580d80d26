import { type ApiObject, createMailhook, eventually, expectErrorBody, loopbackSmtpProvider, putBodyOf, queryEvents, signIn, unique, updateMembership, useTenants } from '../support/api';
import { eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../../src/database/database';
import { users } from '../../src/database/schema';
import { captureLog } from '../support/log-capture';
import { type CaughtMail, useMailCatcher } from '../support/mail-catcher';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

const PASSWORD = 'a long enough password';

describe('self-activation under user_activation: passive (a real SMTP server on 127.0.0.1)', () => {
  const log = captureLog('debug');
  const suite = useTenants({ env: ALLOW_LOOPBACK_RECEIVERS, logger: log.logger });
  const catcher = useMailCatcher();
  const tokens: string[] = [];

  const usersPath = (): string => `/memberships/${suite.tenant.membershipId}/users`;
  const activate = (token: string) => suite.t.http().post(`${usersPath()}/activate`).send({ activation_token: token });

  beforeAll(async () => {
    await updateMembership(suite.t, suite.tenant, { user_activation: 'passive', mail_providers: [loopbackSmtpProvider(catcher.port)] });
    await createMailhook(suite.t, suite.tenant.admin, {
      name: 'Activation',
      event: 'UserCreated',
      mail_subject: 'Welcome to {{membership.name}}',
      mail_format: 'text',
      mail_template: 'Activate: https://app.example/activate?token={{activation_token}} (valid {{activation_token_expires_in}}s)',
      send_to_utilizer: true,
    });
  });

  /** Creates a user as the admin and reads the activation mail it gets. */
  async function createAndReadMail(body: Record<string, unknown> = {}): Promise<{ user: ApiObject; token: string; mail: CaughtMail }> {
    const username = unique('new');
    const email = `${username}@example.com`;
    const res = await suite.t.http().post(usersPath()).set('Authorization', suite.tenant.admin.auth).send({ username, email_address: email, password: PASSWORD, ...body });
    expect(res.status).toBe(201);
    const mail = await eventually(async () => catcher.mailsTo(email)[0], `mail to ${email}`, 10_000);
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
      await suite.t.http().post('/generate-token').set('X-Service-Alias', suite.tenant.membershipId).send({ username: user.username, password: PASSWORD }),
      401,
      'UserInactive',
    );
    // Not an access token.
    expectErrorBody(await suite.t.http().get('/me').set('Authorization', `Bearer ${token}`), 401, 'InvalidToken');

    const done = await activate(token);
    expect(done.status).toBe(204);
    await signIn(suite.t, suite.tenant.membershipId, user.username as string, PASSWORD);
    const updated = (await queryEvents(suite.t, suite.tenant.admin, { event_type: 'UserUpdated', 'document._id': user._id }))[0];
    expect(updated.utilizer_id).toBe(user._id);
    expect(updated.prior.is_active).toBe(false);
    expect(updated.document.is_active).toBe(true);
    // Single use.
    expectErrorBody(await activate(token), 401, 'InvalidToken');
  });

  it("the activation proves the address (the OpenID Provider's email_verified); a new address is unproven again", async () => {
    const verifiedAt = async (id: unknown) => {
      const { db } = suite.t.app.get<Database>(DATABASE);
      const [row] = await db.select({ at: users.emailVerifiedAt }).from(users).where(eq(users.id, id as string));
      return row.at;
    };
    const { user, token } = await createAndReadMail();
    expect(await verifiedAt(user._id)).toBeNull();
    expect((await activate(token)).status).toBe(204);
    expect(await verifiedAt(user._id)).toBeInstanceOf(Date);
    const current = await suite.t.http().get(`${usersPath()}/${user._id as string}`).set('Authorization', suite.tenant.admin.auth);
    const changed = await suite.t
      .http()
      .put(`${usersPath()}/${user._id as string}`)
      .set('Authorization', suite.tenant.admin.auth)
      .send(putBodyOf(current.body, { email_address: `${unique('moved')}@example.com` }));
    expect(changed.status).toBe(200);
    expect(await verifiedAt(user._id)).toBeNull();
  });

  it('refuses the activation token of a user an admin froze (401 InvalidToken), and of one an admin activated', async () => {
    const frozen = await createAndReadMail();
    expect((await suite.t.http().post(`${usersPath()}/${frozen.user._id}/freeze`).set('Authorization', suite.tenant.admin.auth)).status).toBe(200);
    expectErrorBody(await activate(frozen.token), 401, 'InvalidToken');
    const again = await suite.t.http().get(`${usersPath()}/${frozen.user._id}`).set('Authorization', suite.tenant.admin.auth);
    expect(again.body.is_active).toBe(false);

    const activated = await createAndReadMail();
    expect((await suite.t.http().post(`${usersPath()}/${activated.user._id}/activate`).set('Authorization', suite.tenant.admin.auth)).status).toBe(200);
    expectErrorBody(await activate(activated.token), 401, 'InvalidToken');

    // An admin's PUT that says is_active ends it too, even when it keeps the user inactive.
    const put = await createAndReadMail();
    const replaced = await suite.t
      .http()
      .put(`${usersPath()}/${put.user._id}`)
      .set('Authorization', suite.tenant.admin.auth)
      .send(putBodyOf(put.user, { firstname: 'Renamed', is_active: false }));
    expect(replaced.status).toBe(200);
    expectErrorBody(await activate(put.token), 401, 'InvalidToken');
  });

  it('gives no activation to a user created with is_active given, and refuses a reset-typed or foreign token', async () => {
    const explicit = await createAndReadMail({ is_active: false });
    expect(explicit.user.is_active).toBe(false);
    expect(explicit.token).toBe('');
    expectErrorBody(await activate('not.a.token'), 401, 'InvalidToken');
    expectErrorBody(await activate(suite.tenant.admin.accessToken), 401, 'InvalidToken');
    expectErrorBody(await suite.t.http().post(`${usersPath()}/activate`).send({}), 400, 'ModelValidationError');
    expectErrorBody(await suite.t.http().post('/memberships/unknown/users/activate').send({ activation_token: 'a.b.c' }), 404, 'MembershipNotFound');
  });

  it('keeps activation tokens out of events and log lines', async () => {
    expect(tokens.length).toBeGreaterThanOrEqual(3);
    const events = JSON.stringify(await queryEvents(suite.t, suite.tenant.admin, {}, { limit: '1000' }));
    for (const token of tokens) {
      expect(events).not.toContain(token);
      expect(log.text()).not.toContain(token);
    }
  });
});
