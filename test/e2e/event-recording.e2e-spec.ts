import { startTestApp, type TestApp } from '../support/app';
import { ATOMICITY_PATH, EventAtomicityTestModule } from '../support/event-atomicity.module';
import { type CreatedMembership, createMembership, expectErrorBody, type Installation, setupInstallation, unique } from '../support/api';

/**
 * EventRecordingInterceptor: a change and its event commit together or not at all. The route is
 * test-only (its module is booted here, never by the service): its service inserts a role and
 * records RoleCreated in EventRecorder.transaction (joining the interceptor's), and the handler then fails when asked to.
 */
describe('event recording by the interceptor', () => {
  let t: TestApp;
  let inst: Installation;
  let tenant: CreatedMembership;

  beforeAll(async () => {
    t = await startTestApp({ modules: [EventAtomicityTestModule] });
    inst = await setupInstallation(t);
    tenant = await createMembership(t, inst.admin);
  });
  afterAll(async () => {
    await t.close();
  });

  const roleStatus = async (id: string): Promise<number> =>
    (await t.http().get(`/memberships/${tenant.membershipId}/roles/${id}`).set('Authorization', tenant.admin.auth)).status;

  async function roleCreatedEvents(id: string): Promise<unknown[]> {
    const res = await t
      .http()
      .post(`/memberships/${tenant.membershipId}/events/_query`)
      .set('Authorization', tenant.admin.auth)
      .send({ where: { event_type: 'RoleCreated', 'document._id': id } });
    expect(res.status).toBe(200);
    return res.body.items;
  }

  it('a handler that succeeds leaves the change and its event', async () => {
    const id = unique('committed');
    const res = await t.http().post(ATOMICITY_PATH(tenant.membershipId)).send({ id });
    expect(res.status).toBe(201);
    expect(await roleStatus(id)).toBe(200);
    expect(await roleCreatedEvents(id)).toEqual([expect.objectContaining({ event_type: 'RoleCreated', utilizer_id: 'test' })]);
  });

  it('a handler that fails after its service recorded an event leaves neither the change nor the event', async () => {
    const id = unique('rolled-back');
    const res = await t.http().post(ATOMICITY_PATH(tenant.membershipId)).send({ id, failInHandler: true });
    expectErrorBody(res, 400, 'ModelValidationError');
    expect(await roleStatus(id)).toBe(404);
    expect(await roleCreatedEvents(id)).toEqual([]);
  });

  it('a change that fails in its service leaves no event', async () => {
    // The slug is taken: the second insert fails inside the transaction (409), and records nothing.
    const slug = unique('taken');
    expect((await t.http().post(ATOMICITY_PATH(tenant.membershipId)).send({ id: unique('first'), slug })).status).toBe(201);
    const id = unique('second');
    const again = await t.http().post(ATOMICITY_PATH(tenant.membershipId)).send({ id, slug });
    expect(again.status).toBe(409);
    expect(await roleStatus(id)).toBe(404);
    expect(await roleCreatedEvents(id)).toEqual([]);
  });

  it('the application keeps answering after rolled-back requests (no transaction left open)', async () => {
    for (let i = 0; i < 3; i++) {
      await t.http().post(ATOMICITY_PATH(tenant.membershipId)).send({ id: unique('again'), failInHandler: true });
    }
    const id = unique('after');
    expect((await t.http().post(ATOMICITY_PATH(tenant.membershipId)).send({ id })).status).toBe(201);
    expect(await roleCreatedEvents(id)).toHaveLength(1);
  });
});
