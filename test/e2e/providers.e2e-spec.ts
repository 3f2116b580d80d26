import { type ApiObject, as, createRole, createSignedInUser, expectErrorBody, queryEventsAbout, unique, useTenants } from '../support/api';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

const CLIENT_SECRET = 'provider-client-secret-that-must-never-be-shown';

describe('providers API', () => {
  const suite = useTenants({ env: { ...ALLOW_LOOPBACK_RECEIVERS } });
  let base: string;
  beforeAll(() => (base = `/memberships/${suite.tenant.membershipId}/providers`));

  const { get, post, put, del } = as(() => suite.t, () => suite.tenant.admin);

  const providerBody = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    name: unique('Google'),
    type: 'oidc',
    issuer: 'https://accounts.google.com',
    client_id: 'client-1.apps.googleusercontent.com',
    ...overrides,
  });

  const eventsOf = (type: string, resourceId: string) => queryEventsAbout(suite.t, suite.tenant.admin, type, resourceId);

  it('creates a provider with defaults; the client secret is write-only in answers, lists and events', async () => {
    const body = providerBody({ client_secret: CLIENT_SECRET, description: 'staff sign-in' });
    const res = await post(base, body);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      _id: expect.any(String),
      name: body.name,
      slug: (body.name as string).toLowerCase(),
      description: 'staff sign-in',
      type: 'oidc',
      issuer: 'https://accounts.google.com',
      client_id: 'client-1.apps.googleusercontent.com',
      has_client_secret: true,
      default_role: null,
      default_user_type: null,
      is_active: true,
      trust_email: false,
      membership_id: suite.tenant.membershipId,
      sys: { created_at: expect.any(String), created_by: suite.tenant.admin.userId },
    });
    const read = await get(`${base}/${res.body._id}`);
    expect(read.body).toEqual(res.body);
    const listed = await post(`${base}/_query`, { where: { has_client_secret: true, _id: res.body._id } });
    expect(listed.body.items).toEqual([res.body]);
    const created = await eventsOf('ProviderCreated', res.body._id);
    expect(created).toHaveLength(1);
    expect(created[0].document).toEqual(res.body);
    for (const answer of [res, read, listed]) expect(JSON.stringify(answer.body)).not.toContain(CLIENT_SECRET);
    expect(JSON.stringify(created)).not.toContain(CLIENT_SECRET);
    const hidden = await post(`${base}/_query`, { where: { client_secret: CLIENT_SECRET } });
    expectErrorBody(hidden, 400, 'InvalidQuery');
  });

  it('lists with count and sorts by slug; another membership sees none of them', async () => {
    const a = await post(base, providerBody({ slug: unique('aa') }));
    const b = await post(base, providerBody({ slug: unique('zz') }));
    const list = await get(`${base}?with_count=true&sort=slug%20desc&limit=1000`);
    expect(list.status).toBe(200);
    const ids = list.body.items.map((item: ApiObject) => item._id);
    expect(ids.indexOf(b.body._id)).toBeLessThan(ids.indexOf(a.body._id));
    expect(list.body.count).toBe(list.body.items.length);
    const foreign = await get(`/memberships/${suite.other.membershipId}/providers/${a.body._id}`, suite.other.admin.auth);
    expectErrorBody(foreign, 404, 'ProviderNotFound');
    const otherList = await get(`/memberships/${suite.other.membershipId}/providers`, suite.other.admin.auth);
    expect(otherList.body.items).toEqual([]);
    expectErrorBody(await get(`${base}?sort=issuer`), 400, 'InvalidQuery');
  });

  it('rejects a second provider with the same slug (409 ProviderAlreadyExists)', async () => {
    const slug = unique('dup');
    expect((await post(base, providerBody({ slug }))).status).toBe(201);
    expectErrorBody(await post(base, providerBody({ slug })), 409, 'ProviderAlreadyExists');
  });

  it.each([
    ['a missing issuer', { issuer: undefined }, 'issuer'],
    ['an http issuer on a public name', { issuer: 'http://accounts.google.com' }, 'issuer'],
    ['an issuer on a private address', { issuer: 'https://10.0.0.5/' }, 'issuer'],
    ['an issuer on a link-local (metadata) address', { issuer: 'https://169.254.169.254/' }, 'issuer'],
    ['an issuer that is not a URL', { issuer: 'accounts.google.com' }, 'issuer'],
    ['another type', { type: 'saml' }, 'type'],
    ['a missing client_id', { client_id: undefined }, 'client_id'],
    ['an unknown field', { client_name: 'x' }, 'client_name'],
    ['a default role that does not exist', { default_role: 'no-such-role' }, 'default_role'],
    ['a default user type that does not exist', { default_user_type: 'no-such-type' }, 'default_user_type'],
  ])('refuses %s (400 ModelValidationError)', async (_name, overrides, field) => {
    const res = await post(base, providerBody(overrides));
    expectErrorBody(res, 400, 'ModelValidationError');
    expect(res.body.errors.map((error: { field: string }) => error.field)).toContain(field);
  });

  it('refuses a default user type with a required custom field and no default, on create and on update: its sign-ups would all fail', async () => {
    const type = await post(`/memberships/${suite.tenant.membershipId}/user-types`, {
      name: unique('Badged'),
      properties: { badge_no: { type: 'string', required: true }, team: { type: 'string', required: true, default: 'blue' } },
    });
    expect(type.status).toBe(201);
    const created = await post(base, providerBody({ default_user_type: type.body.slug }));
    expectErrorBody(created, 400, 'ModelValidationError');
    expect(created.body.errors).toEqual([{ field: 'default_user_type', message: expect.stringContaining('(badge_no)') }]);

    const provider = await post(base, providerBody());
    expect(provider.status).toBe(201);
    const updated = await put(`${base}/${provider.body._id}`, providerBody({ slug: provider.body.slug, default_user_type: type.body.slug }));
    expectErrorBody(updated, 400, 'ModelValidationError');
    expect((await get(`${base}/${provider.body._id}`)).body.default_user_type).toBeNull();
  });

  it('refuses an issuer on a refused address with "destination not allowed"', async () => {
    const res = await post(base, providerBody({ issuer: 'https://10.1.2.3/realms/x' }));
    expectErrorBody(res, 400, 'ModelValidationError');
    expect(res.body.errors).toEqual([{ field: 'issuer', message: 'destination not allowed (private; see OUTBOUND_ALLOW)' }]);
  });

  /** Outgoing calls to identity providers so far, whatever their outcome (blocked ones included). */
  async function providerCallsSoFar(): Promise<number> {
    const metrics = await suite.t.http().get('/metrics');
    expect(metrics.status).toBe(200);
    const counts = [...metrics.text.matchAll(/^portcullis_outgoing_http_requests_total\{[^}]*kind="provider"[^}]*\} (\d+)/gm)];
    return counts.reduce((sum, match) => sum + Number(match[1]), 0);
  }

  it('creates and changes no provider whose issuer is on a refused address, and calls none of them', async () => {
    const callsBefore = await providerCallsSoFar();
    const refused = [
      'https://10.0.0.5/',
      'https://172.16.0.1/realms/x',
      'https://192.168.1.1/',
      'https://169.254.169.254/latest/meta-data/',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      'https://[fc00::1]/',
      'https://[fe80::1]/',
      'https://[::ffff:10.0.0.1]/',
      'https://167772165/', // 10.0.0.5 in decimal
      'https://0x0a000005/', // 10.0.0.5 in hex
    ];
    const slugs: string[] = [];
    for (const issuer of refused) {
      const slug = unique('refused');
      slugs.push(slug);
      const res = await post(base, providerBody({ issuer, slug }));
      expect({ issuer, status: res.status, errors: res.body.errors }).toEqual({ issuer, status: 400, errors: [{ field: 'issuer', message: expect.stringMatching(/^destination not allowed \((private|link-local|carrier-grade NAT|unspecified); see OUTBOUND_ALLOW\)$/) }] });
    }
    const listed = await post(`${base}/_query`, { where: { slug: { $in: slugs } } });
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([]);
    const all = await get(`${base}?limit=1000`);
    expect(all.body.items.filter((item: ApiObject) => refused.includes(item.issuer) || slugs.includes(item.slug))).toEqual([]);
    const createdEvents = await post(`/memberships/${suite.tenant.membershipId}/events/_query`, { where: { event_type: 'ProviderCreated', 'document.slug': { $in: slugs } } });
    expect(createdEvents.body.items).toEqual([]);
    // Nothing to sign in with either: the login route knows no such provider.
    for (const slug of slugs.slice(0, 2)) {
      expectErrorBody(await suite.t.http().post(`/oauth/${slug}/login?membership_id=${suite.tenant.membershipId}`).send({ id_token: 'x.y.z' }), 404, 'ProviderNotFound');
    }

    // An update to a refused issuer changes nothing.
    const kept = (await post(base, providerBody())).body;
    const { _id, sys: _sys, has_client_secret: _has, membership_id: _membership, ...body } = kept;
    for (const issuer of refused.slice(0, 3)) {
      const res = await put(`${base}/${_id}`, { ...body, issuer });
      expectErrorBody(res, 400, 'ModelValidationError');
      expect(res.body.errors).toEqual([{ field: 'issuer', message: 'destination not allowed (private; see OUTBOUND_ALLOW)' }]);
    }
    expect((await get(`${base}/${_id}`)).body.issuer).toBe(kept.issuer);
    expect(await eventsOf('ProviderUpdated', _id)).toEqual([]);
    // Nothing was fetched at create or update, from these issuers or any other.
    expect(await providerCallsSoFar()).toBe(callsBefore);
  });

  it('accepts an http issuer on a loopback address that OUTBOUND_ALLOW permits', async () => {
    const res = await post(base, providerBody({ issuer: 'http://127.0.0.1:9/oidc' }));
    expect(res.status).toBe(201);
  });

  it('replaces: omitted client_secret is kept, null clears it; the slug is immutable; nothing changed is 409', async () => {
    const body = providerBody({ client_secret: CLIENT_SECRET });
    const created = (await post(base, body)).body;
    const path = `${base}/${created._id}`;
    const { client_secret: _secret, ...withoutSecret } = body;
    const kept = await put(path, { ...withoutSecret, trust_email: true });
    expect(kept.status).toBe(200);
    expect(kept.body).toMatchObject({ has_client_secret: true, trust_email: true, slug: created.slug });
    expect(kept.body.sys.modified_by).toBe(suite.tenant.admin.userId);
    expectErrorBody(await put(path, { ...withoutSecret, trust_email: true }), 409, 'IdenticalDocumentError');
    const cleared = await put(path, { ...withoutSecret, trust_email: true, client_secret: null });
    expect(cleared.body.has_client_secret).toBe(false);
    const renamed = await put(path, { ...withoutSecret, slug: unique('other') });
    expectErrorBody(renamed, 400, 'ModelValidationError');
    const updates = await eventsOf('ProviderUpdated', created._id);
    expect(updates).toHaveLength(2);
    expect(updates.map((event) => event.prior.has_client_secret).sort()).toEqual([true, true]);
    expect(JSON.stringify(updates)).not.toContain(CLIENT_SECRET);
    expectErrorBody(await put(`${base}/${unique('missing')}`, withoutSecret), 404, 'ProviderNotFound');
  });

  it('deletes one (204, then 404) and several (deleted / not_found), one ProviderDeleted event each', async () => {
    const one = (await post(base, providerBody())).body;
    expect((await del(`${base}/${one._id}`)).status).toBe(204);
    expectErrorBody(await get(`${base}/${one._id}`), 404, 'ProviderNotFound');
    expectErrorBody(await del(`${base}/${one._id}`), 404, 'ProviderNotFound');
    const [deletedOne] = await eventsOf('ProviderDeleted', one._id);
    expect(deletedOne.document).toEqual({});
    expect(deletedOne.prior._id).toBe(one._id);

    const a = (await post(base, providerBody())).body;
    const b = (await post(base, providerBody())).body;
    const foreign = (await post(`/memberships/${suite.other.membershipId}/providers`, providerBody(), suite.other.admin.auth)).body;
    const bulk = await del(base, { ids: [a._id, b._id, foreign._id] });
    expect(bulk.status).toBe(200);
    expect(bulk.body).toEqual({ deleted: expect.arrayContaining([a._id, b._id]), not_found: [foreign._id] });
    expect(bulk.body.deleted).toHaveLength(2);
    expect(await eventsOf('ProviderDeleted', a._id)).toHaveLength(1);
    expect(await eventsOf('ProviderDeleted', b._id)).toHaveLength(1);
    expect((await get(`/memberships/${suite.other.membershipId}/providers/${foreign._id}`, suite.other.admin.auth)).status).toBe(200);
    expectErrorBody(await del(base, { ids: [] }), 400, 'ModelValidationError');
  });

  describe('permissions and grants', () => {
    it('needs providers.<action>: a user with providers.read only can read but not create', async () => {
      const role = await createRole(suite.t, suite.tenant.admin, { permissions: ['providers.read'] });
      const { session } = await createSignedInUser(suite.t, suite.tenant.admin, { role: role.slug });
      expect((await get(base, session.auth)).status).toBe(200);
      expectErrorBody(await post(base, providerBody(), session.auth), 403, 'AccessDenied');
    });

    it('a default role counts as granted: a caller who does not hold its permissions gets 403 AccessDenied', async () => {
      const powerful = await createRole(suite.t, suite.tenant.admin, { permissions: ['users.*'] });
      const managerRole = await createRole(suite.t, suite.tenant.admin, { permissions: ['providers.*'] });
      const { session } = await createSignedInUser(suite.t, suite.tenant.admin, { role: managerRole.slug });
      const refused = await post(base, providerBody({ default_role: powerful.slug }), session.auth);
      expectErrorBody(refused, 403, 'AccessDenied');
      expect(refused.body.message).toContain('users.*');
      const allowed = await post(base, providerBody({ default_role: powerful.slug }));
      expect(allowed.status).toBe(201);
      expect(allowed.body.default_role).toBe(powerful.slug);
      const { name, type, issuer, client_id } = allowed.body;
      const reassigned = await put(`${base}/${allowed.body._id}`, { name, type, issuer, client_id, default_role: managerRole.slug }, session.auth);
      expect(reassigned.status).toBe(200);
    });
  });
});
