import { startTestApp, type TestApp } from '../support/app';
import { createApplication, type CreatedMembership, createMembership, createRole, createUser, createWebhook, eventsPath, type Json, setupInstallation, type SignedIn, signIn, waitForResults } from '../support/api';
import { ALLOW_LOOPBACK_RECEIVERS, WebhookReceiver } from '../support/webhook-receiver';

type Event = Json;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * The event log over HTTP. One membership is filled with known events in beforeAll; every query
 * answer is compared with the same filter applied to the full log in the test, so the expectations
 * do not depend on which events setup and sign-in record.
 */
describe('events', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let systemAdmin: SignedIn;
  let tenant: CreatedMembership;
  let admin: SignedIn;
  let all: Event[];
  const users: Json[] = [];
  let webhookId: string;
  let applicationSecret: string;

  const query = (body: unknown, params: Record<string, string> = {}) =>
    t.http().post(`${eventsPath(admin.membershipId)}/_query`).query(params).set('Authorization', admin.auth).send(body as object);

  async function itemsOf(body: unknown, params: Record<string, string> = {}): Promise<Event[]> {
    const res = await query(body, { limit: '1000', ...params });
    expect(res.status).toBe(200);
    return res.body.items;
  }

  const ids = (events: Event[]): string[] => events.map((e) => e._id).sort();

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_TIMEOUT_MS: '1000', ...ALLOW_LOOPBACK_RECEIVERS } });
    receiver = await WebhookReceiver.start();
    systemAdmin = (await setupInstallation(t)).admin;
    tenant = await createMembership(t, systemAdmin);
    admin = tenant.admin;

    const hook = await createWebhook(t, admin, receiver.url('/events-test'), { try_count: 2 });
    webhookId = hook._id;
    users.push(await createUser(t, admin, { firstname: 'Ann', lastname: 'Old' }));
    users.push(await createUser(t, admin, { firstname: 'Bob', lastname: 'Bee' }));
    users.push(await createUser(t, admin, { firstname: 'Cy', lastname: 'Sea' }));
    const update = await t
      .http()
      .put(`/memberships/${admin.membershipId}/users/${users[0]._id}`)
      .set('Authorization', admin.auth)
      .send({ username: users[0].username, email_address: users[0].email_address, firstname: 'Ann', lastname: 'New' });
    expect(update.status).toBe(200);
    expect((await t.http().delete(`/memberships/${admin.membershipId}/users/${users[2]._id}`).set('Authorization', admin.auth)).status).toBe(204);
    const signedIn = await signIn(t, admin.membershipId, users[1].username, 'a long enough password');
    expect((await t.http().get('/verify-token').set('Authorization', signedIn.auth)).status).toBe(200);
    const app = await createApplication(t, admin, { role: 'admin' });
    applicationSecret = app.secret;
    expect((await t.http().get('/verify-token').set('Authorization', app.basic)).status).toBe(200);
    await waitForResults(t, admin, webhookId, 3);

    const res = await t.http().get(eventsPath(admin.membershipId)).query({ limit: '1000', with_count: 'true' }).set('Authorization', admin.auth);
    expect(res.status).toBe(200);
    all = res.body.items;
    expect(res.body.count).toBe(all.length);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  describe('records', () => {
    it('have the event record fields, ms-precision UTC times, and the caller or "system" as utilizer', () => {
      for (const event of all) {
        expect(Object.keys(event).sort()).toEqual(['_id', 'document', 'event_time', 'event_type', 'membership_id', 'prior', 'utilizer_id']);
        expect(event.event_time).toMatch(ISO_MS);
        expect(event.membership_id).toBe(admin.membershipId);
      }
      const created = all.filter((e) => e.event_type === 'UserCreated' && users.some((u) => u._id === e.document._id));
      expect(created).toHaveLength(3);
      for (const event of created) {
        expect(event.utilizer_id).toBe(admin.userId);
        expect(event.prior).toBeNull();
      }
      const results = all.filter((e) => e.event_type === 'WebhookRequestSent');
      expect(results).toHaveLength(3);
      for (const event of results) expect(event.utilizer_id).toBe('system');
    });

    it('record updates with prior and deletions with an empty document', () => {
      const updated = all.find((e) => e.event_type === 'UserUpdated' && e.document._id === users[0]._id)!;
      expect(updated.document.lastname).toBe('New');
      expect(updated.prior.lastname).toBe('Old');
      const deleted = all.find((e) => e.event_type === 'UserDeleted')!;
      expect(deleted.document).toEqual({});
      expect(deleted.prior._id).toBe(users[2]._id);
    });

    it('record token events without tokens', () => {
      const generated = all.find((e) => e.event_type === 'TokenGenerated' && e.utilizer_id === users[1]._id)!;
      expect(generated.document).toMatchObject({ token_type: 'Bearer', expires_in: expect.any(Number), user: { _id: users[1]._id } });
      const verified = all.filter((e) => e.event_type === 'TokenVerified');
      expect(verified.map((e) => e.document.token_type).sort()).toEqual(['Basic', 'Bearer']);
      expect(verified.find((e) => e.document.token_type === 'Bearer')!.document).toEqual({
        token_type: 'Bearer',
        is_refresh_token: false,
        expires_at: expect.stringMatching(ISO_MS),
      });
    });

    it('never hold a password, hash, secret, digest or token string', () => {
      const text = JSON.stringify(all);
      for (const forbidden of ['a long enough password', applicationSecret, tenant.membership.secret_key, admin.accessToken, admin.refreshToken, 'password_hash', 'secret_digest', 'secret_key', '"password"']) {
        expect(forbidden).toBeTruthy();
        expect(text).not.toContain(forbidden);
      }
      expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./);
    });
  });

  describe('GET', () => {
    it('lists newest first by default, with paging and count', async () => {
      const times = all.map((e) => Date.parse(e.event_time));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      const page = await t.http().get(eventsPath(admin.membershipId)).query({ limit: '3', skip: '2' }).set('Authorization', admin.auth);
      expect(page.status).toBe(200);
      expect(page.body.items.map((e: Event) => e._id)).toEqual(all.slice(2, 5).map((e) => e._id));
      expect(page.body.count).toBeUndefined();
    });

    it('gets one event by id; 404 EventNotFound for unknown ids and events of another membership', async () => {
      const one = await t.http().get(`${eventsPath(admin.membershipId)}/${all[3]._id}`).set('Authorization', admin.auth);
      expect(one.status).toBe(200);
      expect(one.body).toEqual(all[3]);
      const missing = await t.http().get(`${eventsPath(admin.membershipId)}/nope`).set('Authorization', admin.auth);
      expect(missing.status).toBe(404);
      expect(missing.body.errorCode).toBe('EventNotFound');
      const systemEvents = await t.http().get(eventsPath(systemAdmin.membershipId)).set('Authorization', systemAdmin.auth);
      const foreign = await t.http().get(`${eventsPath(admin.membershipId)}/${systemEvents.body.items[0]._id}`).set('Authorization', admin.auth);
      expect(foreign.status).toBe(404);
    });

    it('needs events.read (events.read.<id> opens one event) and a caller of the membership', async () => {
      const oneRole = await createRole(t, admin, { permissions: [`events.read.${all[0]._id}`] });
      const one = await createApplication(t, admin, { role: oneRole.slug });
      expect((await t.http().get(`${eventsPath(admin.membershipId)}/${all[0]._id}`).set('Authorization', one.basic)).status).toBe(200);
      const other = await t.http().get(`${eventsPath(admin.membershipId)}/${all[1]._id}`).set('Authorization', one.basic);
      expect(other.status).toBe(403);
      expect(other.body.errorCode).toBe('AccessDenied');
      expect((await t.http().get(eventsPath(admin.membershipId)).set('Authorization', one.basic)).status).toBe(403);
      expect((await t.http().post(`${eventsPath(admin.membershipId)}/_query`).set('Authorization', one.basic).send({})).status).toBe(403);
      const foreign = await t.http().get(eventsPath(admin.membershipId)).set('Authorization', systemAdmin.auth);
      expect(foreign.status).toBe(403);
      expect((await t.http().get(eventsPath(admin.membershipId))).status).toBe(401);
    });
  });

  describe('_query', () => {
    // Earlier tests added events (roles, applications): compare with the log as it is now.
    beforeAll(async () => {
      const res = await t.http().get(eventsPath(admin.membershipId)).query({ limit: '1000' }).set('Authorization', admin.auth);
      all = res.body.items;
    });

    const cases: [string, () => Record<string, unknown>, (e: Event) => boolean][] = [
      ['implicit equality', () => ({ event_type: 'UserCreated' }), (e) => e.event_type === 'UserCreated'],
      ['$eq on a dotted document path', () => ({ 'document.firstname': { $eq: 'Bob' } }), (e) => e.document?.firstname === 'Bob'],
      ['$ne', () => ({ event_type: { $ne: 'UserCreated' } }), (e) => e.event_type !== 'UserCreated'],
      ['$in', () => ({ event_type: { $in: ['UserUpdated', 'UserDeleted'] } }), (e) => ['UserUpdated', 'UserDeleted'].includes(e.event_type)],
      ['$nin', () => ({ event_type: { $nin: ['WebhookRequestSent', 'UserCreated'] } }), (e) => !['WebhookRequestSent', 'UserCreated'].includes(e.event_type)],
      ['$gt on time', () => ({ event_time: { $gt: all[4].event_time } }), (e) => e.event_time > all[4].event_time],
      ['$gte on time', () => ({ event_time: { $gte: all[4].event_time } }), (e) => e.event_time >= all[4].event_time],
      ['$lt on time', () => ({ event_time: { $lt: all[4].event_time } }), (e) => e.event_time < all[4].event_time],
      ['$lte on time', () => ({ event_time: { $lte: all[4].event_time } }), (e) => e.event_time <= all[4].event_time],
      ['a time range', () => ({ event_time: { $gte: all[6].event_time, $lt: all[2].event_time } }), (e) => e.event_time >= all[6].event_time && e.event_time < all[2].event_time],
      ['$gte on a JSON number', () => ({ 'document.attempt': { $gte: 1 } }), (e) => typeof e.document?.attempt === 'number' && e.document.attempt >= 1],
      ['$exists true on prior', () => ({ prior: { $exists: true } }), (e) => e.prior !== null],
      ['$exists false on a dotted path', () => ({ 'document.firstname': { $exists: false } }), (e) => e.document?.firstname === undefined],
      ['a dotted path into prior', () => ({ 'prior.lastname': 'Old' }), (e) => e.prior?.lastname === 'Old'],
      ['a nested dotted path', () => ({ 'document.sys.created_by': admin.userId }), (e) => e.document?.sys?.created_by === admin.userId],
      ['utilizer_id', () => ({ utilizer_id: 'system' }), (e) => e.utilizer_id === 'system'],
      ['$and', () => ({ $and: [{ event_type: 'UserCreated' }, { 'document.lastname': { $in: ['Bee', 'Sea'] } }] }), (e) => e.event_type === 'UserCreated' && ['Bee', 'Sea'].includes(e.document?.lastname)],
      ['$or', () => ({ $or: [{ event_type: 'UserDeleted' }, { 'document.firstname': 'Cy' }] }), (e) => e.event_type === 'UserDeleted' || e.document?.firstname === 'Cy'],
      ['membership_id cannot widen the scope', () => ({ $or: [{ membership_id: systemAdmin.membershipId }, { event_type: 'UserDeleted' }] }), (e) => e.event_type === 'UserDeleted'],
    ];

    it.each(cases)('filters with %s', async (_name, where, expected) => {
      const want = all.filter(expected);
      expect(want.length).toBeGreaterThan(0);
      expect(ids(await itemsOf({ where: where() }))).toEqual(ids(want));
    });

    // $in on event_type in the default order runs as one indexed query per value (a UNION ALL).
    it('answers $in on event_type newest first, page by page, with repeated values and other conditions', async () => {
      const types = ['UserCreated', 'TokenVerified', 'UserCreated', 'WebhookRequestSent'];
      const want = all.filter((e) => types.includes(e.event_type));
      expect(new Set(want.map((e) => e.event_type)).size).toBe(3);
      const paged: Event[] = [];
      for (let skip = 0; skip < want.length + 2; skip += 2) {
        paged.push(...(await itemsOf({ where: { event_type: { $in: types } } }, { skip: String(skip), limit: '2' })));
      }
      expect(paged.map((e) => e._id)).toEqual(want.map((e) => e._id));
      const counted = await query({ where: { event_type: { $in: types } } }, { limit: '3', with_count: 'true' });
      expect(counted.body.items.map((e: Event) => e._id)).toEqual(want.slice(0, 3).map((e) => e._id));
      expect(counted.body.count).toBe(want.length);
      const narrowed = await itemsOf({ where: { event_type: { $in: types }, utilizer_id: admin.userId } });
      const narrowedWant = want.filter((e) => e.utilizer_id === admin.userId);
      expect(narrowedWant.length).toBeGreaterThan(0);
      expect(narrowed.map((e) => e._id)).toEqual(narrowedWant.map((e) => e._id));
    });

    it('projects dotted select paths (include and exclude) and keeps _id', async () => {
      const items = await itemsOf({ where: { event_type: 'UserCreated', 'document.firstname': 'Ann' }, select: { event_type: 1, 'document.username': 1, 'document.sys.created_by': 1 } });
      expect(items).toEqual([{ _id: expect.any(String), event_type: 'UserCreated', document: { username: users[0].username, sys: { created_by: admin.userId } } }]);
      const excluded = await itemsOf({ where: { event_type: 'UserDeleted' }, select: { document: 0, prior: 0 } });
      expect(excluded).toHaveLength(1);
      expect(Object.keys(excluded[0]).sort()).toEqual(['_id', 'event_time', 'event_type', 'membership_id', 'utilizer_id']);
    });

    it('sorts by event_time, event_type or utilizer_id and limits', async () => {
      const ascending = await itemsOf({}, { sort: 'event_time asc' });
      expect(ascending.map((e) => e._id)).toEqual([...all].reverse().map((e) => e._id));
      const byType = await itemsOf({ select: { event_type: 1 } }, { sort: 'event_type' });
      const types = byType.map((e) => e.event_type);
      expect(types).toEqual([...types].sort());
      const byUtilizer = await itemsOf({}, { sort: 'utilizer_id desc' });
      const utilizers = byUtilizer.map((e) => e.utilizer_id);
      expect(utilizers).toEqual([...utilizers].sort().reverse());
      const limited = await query({ where: { event_type: 'UserCreated' } }, { sort: 'event_time desc', limit: '2', with_count: 'true' });
      expect(limited.body.items).toHaveLength(2);
      expect(limited.body.count).toBe(all.filter((e) => e.event_type === 'UserCreated').length);
      expect(limited.body.items.map((e: Event) => e._id)).toEqual(all.filter((e) => e.event_type === 'UserCreated').slice(0, 2).map((e) => e._id));
    });

    it('accepts an empty body and an empty where', async () => {
      const res = await t.http().post(`${eventsPath(admin.membershipId)}/_query`).query({ limit: '1000' }).set('Authorization', admin.auth);
      expect(res.status).toBe(200);
      expect(res.body.items).toHaveLength(all.length);
      expect(await itemsOf({ where: {} })).toHaveLength(all.length);
    });

    const deep = (levels: number): Record<string, unknown> => {
      let filter: Record<string, unknown> = { event_type: 'UserCreated' };
      for (let i = 1; i < levels; i++) filter = { $and: [filter] };
      return filter;
    };

    // Every row has three entries: jest passes `done` in place of a missing argument.
    it.each<[string, unknown, Record<string, string>]>([
      ['$where', { where: { $where: 'sleep(10)' } }, {}],
      ['$regex', { where: { event_type: { $regex: '^User' } } }, {}],
      ['$expr', { where: { $expr: { $eq: [1, 1] } } }, {}],
      ['$function', { where: { 'document.x': { $function: 'x' } } }, {}],
      ['an unknown field', { where: { password_hash: 'x' } }, {}],
      ['a SQL fragment as field name', { where: { "event_type' or '1'='1": 'x' } }, {}],
      ['an invalid path segment', { where: { 'document.a b': 1 } }, {}],
      ['a wrong value type', { where: { event_time: 5 } }, {}],
      ['a malformed timestamp', { where: { event_time: { $gte: 'yesterday' } } }, {}],
      ['nesting past 8 levels', { where: deep(9) }, {}],
      ['a where that is a string', { where: "event_type = 'x'" }, {}],
      ['a where that is an array', { where: [] }, {}],
      ['mixed select values', { select: { event_type: 1, document: 0 } }, {}],
      ['select of an unknown field', { select: { secret: 1 } }, {}],
      ['an unknown body key', { filter: {} }, {}],
      ['sort by a JSON path', {}, { sort: 'document.username' }],
      ['sort by an unindexed field', {}, { sort: '_id' }],
      ['a bad sort direction', {}, { sort: 'event_time sideways' }],
      ['limit 0', {}, { limit: '0' }],
      ['limit 1001', {}, { limit: '1001' }],
      ['more than 1000 $in values', { where: { event_type: { $in: Array.from({ length: 1001 }, (_, i) => `T${i}`) } } }, {}],
      ['a negative skip', {}, { skip: '-1' }],
      ['with_count not boolean', {}, { with_count: 'maybe' }],
    ])('refuses %s with 400 InvalidQuery', async (_name, body, params) => {
      const res = await query(body, params);
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('InvalidQuery');
      expect(res.body.message).not.toMatch(/select |syntax|postgres/i);
    });

    // The body budget and the top-level check: these never reach the query.
    it.each([
      ['more than 2000 array elements in all', { where: { event_type: { $in: Array.from({ length: 2001 }, (_, i) => `T${i}`) } } }],
      ['a body that is an array', []],
    ])('refuses %s with 400 ModelValidationError before the query', async (_name, body) => {
      const res = await query(body, {});
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('ModelValidationError');
    });

    it('refuses a bad list parameter on GET too', async () => {
      const res = await t.http().get(eventsPath(admin.membershipId)).query({ sort: 'prior' }).set('Authorization', admin.auth);
      expect(res.status).toBe(400);
      expect(res.body.errorCode).toBe('InvalidQuery');
    });
  });
});
