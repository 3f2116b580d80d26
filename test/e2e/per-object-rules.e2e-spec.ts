import { type ApiCaller, type ApiObject, createApplication, createApplicationWithPermissions, createMembership, createRole, createSignedInUser, createUser, createUserType, createWebhook, expectErrorBody, putBodyOf, unique, useInstallation, usersPath, userTypesPath, webhooksPath } from '../support/api';

/**
 * Contract "Bounded work and per-object rules": bulk routes apply each id's decision, lists leave
 * out what a forbidden entry denies, and a unique custom field is privileged on own-record updates.
 */
describe('per-object rules', () => {
  const suite = useInstallation();

  // Passive webhooks are never called: the address is only stored.
  const HOOK_URL = 'https://receiver.invalid/hook';

  interface Resource {
    name: string;
    path: () => string;
    create: () => Promise<string>;
  }

  const resources: Resource[] = [
    { name: 'users', path: () => usersPath(suite.admin.membershipId), create: async () => (await createUser(suite.t, suite.admin))._id },
    {
      name: 'webhooks',
      path: () => webhooksPath(suite.admin.membershipId),
      create: async () => (await createWebhook(suite.t, suite.admin, HOOK_URL, { status: 'passive' }))._id as string,
    },
    { name: 'user-types', path: () => userTypesPath(suite.admin.membershipId), create: async () => (await createUserType(suite.t, suite.admin, {}))._id },
    { name: 'roles', path: () => `/memberships/${suite.admin.membershipId}/roles`, create: async () => (await createRole(suite.t, suite.admin))._id as string },
    { name: 'applications', path: () => `/memberships/${suite.admin.membershipId}/applications`, create: async () => (await createApplication(suite.t, suite.admin)).id },
  ];

  const exists = async (resource: Resource, id: string): Promise<boolean> =>
    (await suite.t.http().get(`${resource.path()}/${id}`).set('Authorization', suite.admin.auth)).status === 200;

  describe.each(resources)('bulk delete of $name', (resource) => {
    it('refuses the whole request when one id is forbidden, as the single route does (21.5)', async () => {
      const denied = await resource.create();
      const allowed = await resource.create();
      const caller = await createApplicationWithPermissions(suite.t, suite.admin, [`${resource.name}.delete`, `${resource.name}.read`], [`${resource.name}.delete.${denied}`]);

      const single = await suite.t.http().delete(`${resource.path()}/${denied}`).set('Authorization', caller.auth);
      expectErrorBody(single, 403, 'AccessDenied');
      const bulk = await suite.t.http().delete(resource.path()).set('Authorization', caller.auth).send({ ids: [allowed, denied] });
      expectErrorBody(bulk, 403, 'AccessDenied');
      expect(bulk.body.message).toContain(denied);
      expect(await exists(resource, denied)).toBe(true);
      expect(await exists(resource, allowed)).toBe(true);

      const rest = await suite.t.http().delete(resource.path()).set('Authorization', caller.auth).send({ ids: [allowed] });
      expect(rest.status).toBe(200);
      expect(rest.body).toEqual({ deleted: [allowed], not_found: [] });
    });
  });

  const listed: Resource[] = [
    ...resources,
    {
      name: 'events',
      path: () => `/memberships/${suite.admin.membershipId}/events`,
      // The UserCreated event of a new user.
      create: async () => {
        const user = await createUser(suite.t, suite.admin);
        const res = await suite.t
          .http()
          .post(`/memberships/${suite.admin.membershipId}/events/_query`)
          .set('Authorization', suite.admin.auth)
          .send({ where: { event_type: 'UserCreated', 'document._id': user._id } });
        return res.body.items[0]._id as string;
      },
    },
  ];

  describe.each(listed)('list and _query of $name', (resource) => {
    it('leave out the items whose read the caller is denied by a forbidden entry', async () => {
      const hidden = await resource.create();
      const shown = await resource.create();
      const caller = await createApplicationWithPermissions(suite.t, suite.admin, [`${resource.name}.read`], [`${resource.name}.read.${hidden}`]);
      const ids = (items: ApiObject[]): string[] => items.map((item) => item._id as string);

      expectErrorBody(await suite.t.http().get(`${resource.path()}/${hidden}`).set('Authorization', caller.auth), 403, 'AccessDenied');
      const list = await suite.t.http().get(resource.path()).query({ limit: 1000, with_count: true }).set('Authorization', caller.auth);
      expect(list.status).toBe(200);
      expect(ids(list.body.items)).toContain(shown);
      expect(ids(list.body.items)).not.toContain(hidden);
      expect(list.body.count).toBe(list.body.items.length);

      const query = await suite.t
        .http()
        .post(`${resource.path()}/_query`)
        .query({ with_count: true })
        .set('Authorization', caller.auth)
        .send({ where: { _id: { $in: [hidden, shown] } } });
      expect(query.status).toBe(200);
      expect(ids(query.body.items)).toEqual([shown]);
      expect(query.body.count).toBe(1);

      const byAdmin = await suite.t.http().post(`${resource.path()}/_query`).set('Authorization', suite.admin.auth).send({ where: { _id: { $in: [hidden, shown] } } });
      expect(ids(byAdmin.body.items).sort()).toEqual([hidden, shown].sort());
    });
  });

  /** Collections whose listing code does not go through the shared resource service: the same rule holds. */
  const otherListings: { name: string; resource: string; path: () => string; create: () => Promise<string> }[] = [
    {
      name: 'active-tokens',
      resource: 'tokens',
      path: () => `/memberships/${suite.admin.membershipId}/active-tokens`,
      // A new sign-in session of a new user: its record's id is the one the listing shows.
      create: async () => {
        const { user } = await createSignedInUser(suite.t, suite.admin);
        const res = await suite.t
          .http()
          .post(`/memberships/${suite.admin.membershipId}/active-tokens/_query`)
          .set('Authorization', suite.admin.auth)
          .send({ where: { user_id: user._id } });
        return res.body.items[0]._id as string;
      },
    },
    {
      name: 'memberships',
      resource: 'memberships',
      path: () => '/memberships',
      create: async () => (await createMembership(suite.t, suite.admin)).membershipId,
    },
  ];

  describe.each(otherListings)('list and _query of $name', (listing) => {
    it('leave out the items whose read the caller is denied by a forbidden entry', async () => {
      const hidden = await listing.create();
      const shown = await listing.create();
      const caller = await createApplicationWithPermissions(suite.t, suite.admin, [`${listing.resource}.read`], [`${listing.resource}.read.${hidden}`]);
      const ids = (items: ApiObject[]): string[] => items.map((item) => item._id as string);

      expectErrorBody(await suite.t.http().get(`${listing.path()}/${hidden}`).set('Authorization', caller.auth), 403, 'AccessDenied');
      const list = await suite.t.http().get(listing.path()).query({ limit: 1000, with_count: true }).set('Authorization', caller.auth);
      expect(list.status).toBe(200);
      expect(ids(list.body.items)).toContain(shown);
      expect(ids(list.body.items)).not.toContain(hidden);
      expect(list.body.count).toBe(list.body.items.length);

      const query = await suite.t.http().post(`${listing.path()}/_query`).query({ with_count: true }).set('Authorization', caller.auth).send({ where: { _id: { $in: [hidden, shown] } } });
      expect(query.status).toBe(200);
      expect(ids(query.body.items)).toEqual([shown]);
      expect(query.body.count).toBe(1);
    });
  });

  describe('own-record update of a unique custom field', () => {
    it('answers 403 before any uniqueness check, so a 409 tells nothing (21.7)', async () => {
      const type = await createUserType(suite.t, suite.admin, { properties: { badge: { type: 'string', unique: true }, nickname: { type: 'string' } } });
      const holder = await createUser(suite.t, suite.admin, { user_type: type.slug, badge: unique('badge') });
      const { user, session } = await createSignedInUser(suite.t, suite.admin, { user_type: type.slug, badge: unique('badge') });
      const put = (body: object) => suite.t.http().put(`${usersPath(suite.admin.membershipId)}/${user._id}`).set('Authorization', session.auth).send(body);

      const taken = await put(putBodyOf(user, { badge: holder.badge }));
      expectErrorBody(taken, 403, 'AccessDenied');
      expect(taken.body.message).toContain('badge');
      expectErrorBody(await put(putBodyOf(user, { badge: unique('free') })), 403, 'AccessDenied');

      const nickname = await put(putBodyOf(user, { nickname: 'Ace' }));
      expect(nickname.status).toBe(200);
      expect(nickname.body).toMatchObject({ badge: user.badge, nickname: 'Ace' });
    });

    it('lets a caller holding users.update.{id} change it, and then the uniqueness check answers', async () => {
      const type = await createUserType(suite.t, suite.admin, { properties: { badge: { type: 'string', unique: true } } });
      const holder = await createUser(suite.t, suite.admin, { user_type: type.slug, badge: unique('badge') });
      const user = await createUser(suite.t, suite.admin, { user_type: type.slug, badge: unique('badge') });
      const updater: ApiCaller = await createApplicationWithPermissions(suite.t, suite.admin, [`users.update.${user._id}`]);
      const path = `${usersPath(suite.admin.membershipId)}/${user._id}`;
      expectErrorBody(await suite.t.http().put(path).set('Authorization', updater.auth).send(putBodyOf(user, { badge: holder.badge })), 409, 'UserAlreadyExists');
      expect((await suite.t.http().put(path).set('Authorization', updater.auth).send(putBodyOf(user, { badge: unique('new') }))).status).toBe(200);
    });
  });
});
