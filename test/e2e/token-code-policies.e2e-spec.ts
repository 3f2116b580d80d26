import { and, asc, eq } from 'drizzle-orm';
import { DATABASE, type Database } from '../../src/database/database';
import { events } from '../../src/database/schema';
import type { TestApp } from '../support/app';
import { bootInstallation, type Installation, slugOfName, unique } from '../support/api';

/** Token code policies: CRUD, `_query`, bulk delete, their events. */
describe('token code policies', () => {
  let t: TestApp;
  let inst: Installation;

  beforeAll(async () => ({ t, inst } = await bootInstallation()));
  afterAll(() => t.close());

  const path = () => `/memberships/${inst.admin.membershipId}/token-code-policies`;
  const policyEvents = (type: string) =>
    t.app
      .get<Database>(DATABASE)
      .db.select()
      .from(events)
      .where(and(eq(events.membershipId, inst.admin.membershipId), eq(events.eventType, type)))
      .orderBy(asc(events.eventTime), asc(events.id));
  const errorOf = (res: { status: number; body: { errorCode?: string } }) => ({ status: res.status, code: res.body.errorCode });

  it('creates with the defaults, reads, replaces (slug kept) and deletes, with an event each', async () => {
    const name = unique('TV codes');
    const created = await t.http().post(path()).set('Authorization', inst.admin.auth).send({ name });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      _id: expect.any(String),
      name,
      slug: slugOfName(name),
      description: null,
      length: 8,
      contains_letters: true,
      contains_digits: true,
      expires_in: 600,
      membership_id: inst.admin.membershipId,
      sys: { created_at: expect.any(String), created_by: inst.admin.userId },
    });
    const id = created.body._id as string;
    expect((await t.http().get(`${path()}/${id}`).set('Authorization', inst.admin.auth)).body).toEqual(created.body);

    const replaced = await t
      .http()
      .put(`${path()}/${id}`)
      .set('Authorization', inst.admin.auth)
      .send({ name: `${name} renamed`, length: 6, contains_letters: false, expires_in: 120 });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ slug: created.body.slug, length: 6, contains_letters: false, contains_digits: true, expires_in: 120 });
    const again = await t.http().put(`${path()}/${id}`).set('Authorization', inst.admin.auth).send({ name: `${name} renamed`, length: 6, contains_letters: false, expires_in: 120 });
    expect(errorOf(again)).toEqual({ status: 409, code: 'IdenticalDocumentError' });

    await t.http().delete(`${path()}/${id}`).set('Authorization', inst.admin.auth).expect(204);
    expect(errorOf(await t.http().get(`${path()}/${id}`).set('Authorization', inst.admin.auth))).toEqual({ status: 404, code: 'TokenCodePolicyNotFound' });

    const about = (rows: Awaited<ReturnType<typeof policyEvents>>) => rows.filter((e) => JSON.stringify([e.document, e.prior]).includes(id));
    expect(about(await policyEvents('TokenCodePolicyCreated')).map((e) => e.document)).toEqual([created.body]);
    expect(about(await policyEvents('TokenCodePolicyUpdated')).map((e) => ({ document: e.document, prior: e.prior }))).toEqual([
      { document: replaced.body, prior: created.body },
    ]);
    expect(about(await policyEvents('TokenCodePolicyDeleted')).map((e) => ({ document: e.document, prior: e.prior }))).toEqual([
      { document: {}, prior: replaced.body },
    ]);
  });

  it('refuses a duplicate slug (409), letters and digits both off (400), and lengths out of range (400)', async () => {
    const name = unique('Dup');
    await t.http().post(path()).set('Authorization', inst.admin.auth).send({ name }).expect(201);
    expect(errorOf(await t.http().post(path()).set('Authorization', inst.admin.auth).send({ name }))).toEqual({ status: 409, code: 'TokenCodePolicyAlreadyExists' });
    const bad = [
      { name: unique('x'), contains_letters: false, contains_digits: false },
      { name: unique('x'), length: 4 },
      { name: unique('x'), length: 13 },
      { name: unique('x'), expires_in: 0 },
      { name: unique('x'), expires_in: 1801 },
      { name: '' },
      { name: 'x'.repeat(129) },
    ];
    for (const body of bad) {
      expect(errorOf(await t.http().post(path()).set('Authorization', inst.admin.auth).send(body))).toEqual({ status: 400, code: 'ModelValidationError' });
    }
  });

  it('lists, queries with where, and bulk deletes with one event per policy', async () => {
    const a = await t.http().post(path()).set('Authorization', inst.admin.auth).send({ name: unique('Digits'), contains_letters: false });
    const b = await t.http().post(path()).set('Authorization', inst.admin.auth).send({ name: unique('Letters'), contains_digits: false });
    const listed = await t.http().get(path()).set('Authorization', inst.admin.auth);
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((p: { _id: string }) => p._id)).toEqual(expect.arrayContaining([a.body._id, b.body._id]));
    const queried = await t.http().post(`${path()}/_query`).set('Authorization', inst.admin.auth).send({ where: { _id: a.body._id, contains_letters: false } });
    expect(queried.body.items.map((p: { _id: string }) => p._id)).toEqual([a.body._id]);
    const missing = '3f0c8a2e-5b1d-4c7e-9f1a-2b3c4d5e6f70';
    const bulk = await t.http().delete(path()).set('Authorization', inst.admin.auth).send({ ids: [a.body._id, b.body._id, missing] });
    expect(bulk.status).toBe(200);
    expect({ deleted: [...bulk.body.deleted].sort(), not_found: bulk.body.not_found }).toEqual({ deleted: [a.body._id, b.body._id].sort(), not_found: [missing] });
    const deletions = (await policyEvents('TokenCodePolicyDeleted')).filter((e) => [a.body._id, b.body._id].includes((e.prior as { _id: string })._id));
    expect(deletions).toHaveLength(2);
  });

  it('needs token-code-policies permissions: a user without them gets 403', async () => {
    const username = unique('plain');
    await t
      .http()
      .post(`/memberships/${inst.admin.membershipId}/users`)
      .set('Authorization', inst.admin.auth)
      .send({ username, email_address: `${username}@example.com`, password: 'a long enough password' })
      .expect(201);
    const signedIn = await t.http().post('/generate-token').set('X-Service-Alias', inst.admin.membershipId).send({ username, password: 'a long enough password' });
    const auth = `Bearer ${signedIn.body.access_token as string}`;
    expect(errorOf(await t.http().get(path()).set('Authorization', auth))).toEqual({ status: 403, code: 'AccessDenied' });
    expect(errorOf(await t.http().post(path()).set('Authorization', auth).send({ name: unique('p') }))).toEqual({ status: 403, code: 'AccessDenied' });
  });

  it("membership code_policy: an unknown slug is refused, a named policy shapes the codes and cannot be deleted", async () => {
    const m = inst.admin.membershipId;
    const membership = (await t.http().get(`/memberships/${m}`).set('Authorization', inst.admin.auth)).body as Record<string, unknown>;
    expect(membership.code_policy).toBeNull();
    const putBody = (codePolicy: string | null) => ({
      name: membership.name,
      expires_in: membership.expires_in,
      refresh_token_expires_in: membership.refresh_token_expires_in,
      scoped_token_expires_in: membership.scoped_token_expires_in,
      user_activation: membership.user_activation,
      hash_algorithm: membership.hash_algorithm,
      code_policy: codePolicy,
    });
    expect(errorOf(await t.http().put(`/memberships/${m}`).set('Authorization', inst.admin.auth).send(putBody('no-such-policy')))).toEqual({
      status: 400,
      code: 'ModelValidationError',
    });
    const policy = await t.http().post(path()).set('Authorization', inst.admin.auth).send({ name: unique('Digits'), length: 6, contains_letters: false, expires_in: 90 });
    const named = await t.http().put(`/memberships/${m}`).set('Authorization', inst.admin.auth).send(putBody(policy.body.slug as string));
    expect({ status: named.status, code_policy: named.body.code_policy }).toEqual({ status: 200, code_policy: policy.body.slug });

    const code = await t.http().post(`/memberships/${m}/codes`).send({});
    expect({ user_code: code.body.user_code, expires_in: code.body.expires_in }).toEqual({ user_code: expect.stringMatching(/^[0-9]{6}$/), expires_in: 90 });

    expect(errorOf(await t.http().delete(`${path()}/${policy.body._id as string}`).set('Authorization', inst.admin.auth))).toEqual({ status: 409, code: 'TokenCodePolicyInUse' });
    expect(errorOf(await t.http().delete(path()).set('Authorization', inst.admin.auth).send({ ids: [policy.body._id] }))).toEqual({ status: 409, code: 'TokenCodePolicyInUse' });
    await t.http().put(`/memberships/${m}`).set('Authorization', inst.admin.auth).send(putBody(null)).expect(200);
    await t.http().delete(`${path()}/${policy.body._id as string}`).set('Authorization', inst.admin.auth).expect(204);
  });
});
