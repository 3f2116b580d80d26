import { type ApiCaller, createApplicationWithPermissions, createSignedInUser, createUser, eventsAbout, expectErrorBody, type SignedIn, signIn, useInstallation, usersPath } from '../support/api';

/** Contract "Password change": the user itself proves the current password; others need users.update.{id}. */
describe('password change', () => {
  const suite = useInstallation();
  let base: string;
  beforeAll(() => (base = usersPath(suite.admin.membershipId)));

  const change = (caller: ApiCaller, userId: string, body: object) =>
    suite.t.http().put(`${base}/${userId}/change-password`).set('Authorization', caller.auth).send(body);
  const stillWorks = async (session: SignedIn, userId: string): Promise<void> => {
    expect((await suite.t.http().get(`${base}/${userId}`).set('Authorization', session.auth)).status).toBe(200);
  };

  it('refuses a self change without the current password, and revokes nothing (15.5)', async () => {
    const { user, session } = await createSignedInUser(suite.t, suite.admin);
    const otherDevice = await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
    const res = await change(session, user._id, { password: 'taken over for good' });
    expectErrorBody(res, 400, 'ModelValidationError');
    expect(res.body.errors).toEqual([{ field: 'current_password', message: expect.any(String) }]);
    // null is no password either: refused as a value, not checked (and counted) as a wrong password.
    const sentNull = await change(session, user._id, { current_password: null, password: 'taken over for good' });
    expectErrorBody(sentNull, 400, 'ModelValidationError');
    expect(sentNull.body.errors).toEqual([{ field: 'current_password', message: expect.any(String) }]);
    await stillWorks(session, user._id);
    await stillWorks(otherDevice, user._id);
    await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
    expect(await eventsAbout(suite.t, suite.admin.membershipId, 'UserPasswordChanged', user._id)).toHaveLength(0);
  });

  it('refuses a wrong current password with InvalidCurrentPassword, and revokes nothing', async () => {
    const { user, session } = await createSignedInUser(suite.t, suite.admin);
    const otherDevice = await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
    const res = await change(session, user._id, { current_password: 'not my password', password: 'taken over for good' });
    expectErrorBody(res, 400, 'InvalidCurrentPassword');
    expect(JSON.stringify(res.body)).not.toContain('not my password');
    await stillWorks(session, user._id);
    await stillWorks(otherDevice, user._id);
    await signIn(suite.t, suite.admin.membershipId, user.username, user.password);
  });

  it('changes its own password with the current one', async () => {
    const { user, session } = await createSignedInUser(suite.t, suite.admin);
    const res = await change(session, user._id, { current_password: user.password, password: 'my brand new password' });
    expect(res.status).toBe(204);
    await signIn(suite.t, suite.admin.membershipId, user.username, 'my brand new password');
  });

  it('refuses a new password equal to the current one, for the user and for an admin', async () => {
    const { user, session } = await createSignedInUser(suite.t, suite.admin);
    const self = await change(session, user._id, { current_password: user.password, password: user.password });
    expectErrorBody(self, 400, 'ModelValidationError');
    expect(self.body.errors).toEqual([{ field: 'password', message: expect.any(String) }]);
    const byAdmin = await change(suite.admin, user._id, { password: user.password });
    expectErrorBody(byAdmin, 400, 'ModelValidationError');
    for (const password of ['short', 'p'.repeat(257)]) {
      expectErrorBody(await change(session, user._id, { current_password: user.password, password }), 400, 'ModelValidationError');
    }
  });

  it('lets another caller holding users.update.{id} set the password alone; users.change-password no longer suffices', async () => {
    const user = await createUser(suite.t, suite.admin);
    const updater = await createApplicationWithPermissions(suite.t, suite.admin, [`users.update.${user._id}`]);
    expect((await change(updater, user._id, { password: 'set by an updater' })).status).toBe(204);
    await signIn(suite.t, suite.admin.membershipId, user.username, 'set by an updater');

    const changer = await createApplicationWithPermissions(suite.t, suite.admin, ['users.change-password']);
    expectErrorBody(await change(changer, user._id, { password: 'set by a changer' }), 403, 'AccessDenied');
    const stranger = await createUser(suite.t, suite.admin);
    expectErrorBody(await change(updater, stranger._id, { password: 'set by an updater' }), 403, 'AccessDenied');
  });

  it('refuses current_password from a caller other than the user', async () => {
    const user = await createUser(suite.t, suite.admin);
    const res = await change(suite.admin, user._id, { current_password: user.password, password: 'set by the admin' });
    expectErrorBody(res, 400, 'ModelValidationError');
    expect(res.body.errors).toEqual([{ field: 'current_password', message: expect.any(String) }]);
  });
});
