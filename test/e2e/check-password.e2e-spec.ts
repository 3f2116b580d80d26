import { createUser, expectErrorBody, queryEvents, type SignedIn, signIn, useInstallation } from '../support/api';
import { captureLog } from '../support/log-capture';

const PASSWORD = 'the password to check';

describe('/users/check-password', () => {
  const log = captureLog('debug');
  const suite = useInstallation({ logger: log.logger });
  let user: SignedIn;
  beforeAll(async () => {
    const created = await createUser(suite.t, suite.inst.admin, { password: PASSWORD });
    user = await signIn(suite.t, suite.inst.membership._id as string, created.username, PASSWORD);
  });

  const post = (body: unknown, query: Record<string, string> = {}) => suite.t.http().post('/users/check-password').query(query).set('Authorization', user.auth).send(body as object);

  it("checks the caller's own password from the body, or the deprecated query string (the body wins)", async () => {
    expect((await post({ password: PASSWORD })).body).toEqual({ valid: true });
    expect((await post({ password: 'not the password' })).body).toEqual({ valid: false });
    const get = await suite.t.http().get('/users/check-password').query({ password: PASSWORD }).set('Authorization', user.auth);
    expect(get.status).toBe(200);
    expect(get.body).toEqual({ valid: true });
    expect((await post({}, { password: PASSWORD })).body).toEqual({ valid: true });
    expect((await post({ password: 'wrong, and it wins' }, { password: PASSWORD })).body).toEqual({ valid: false });
    expect((await post({ password: `${PASSWORD}${'x'.repeat(300)}` })).body).toEqual({ valid: false });
  });

  it('refuses Basic (403), a missing password (400) and no token (401), and records no event', async () => {
    const before = (await queryEvents(suite.t, suite.inst.admin, {}, { limit: '1000' })).length;
    expectErrorBody(
      await suite.t.http().post('/users/check-password').set('Authorization', suite.inst.application.basic).send({ password: PASSWORD }),
      403,
      'AccessDenied',
    );
    expectErrorBody(await post({}), 400, 'ModelValidationError');
    expectErrorBody(await post({ password: 42 }), 400, 'ModelValidationError');
    expectErrorBody(await suite.t.http().get('/users/check-password').query({ password: ['a', 'b'] }).set('Authorization', user.auth), 400, 'ModelValidationError');
    expect((await suite.t.http().post('/users/check-password').send({ password: PASSWORD })).status).toBe(401);
    await post({ password: 'one more wrong one' });
    const after = await queryEvents(suite.t, suite.inst.admin, {}, { limit: '1000' });
    // Only the admin's own event reads may have been recorded in between; nothing about the checks.
    expect(after.filter((event) => !['TokenVerified'].includes(event.event_type as string)).length).toBeLessThanOrEqual(before);
    expect(JSON.stringify(after)).not.toContain(PASSWORD);
    // The query form puts the password in the URL: log lines hold the route template, never the value.
    expect(log.text()).toContain('/users/check-password');
    expect(log.text()).not.toContain(PASSWORD);
    expect(log.text()).not.toContain(encodeURIComponent(PASSWORD));
  });
});
