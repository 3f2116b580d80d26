import { createHash, randomBytes } from 'node:crypto';
import type { TestApp } from '../support/app';
import { createApplication, createMembership, createUser } from '../support/api';
import { describeWithServer, useTwoInstances } from '../support/instances';
import { formAction, PageBrowser, type PageAnswer } from '../support/oidc-browser';

/*
 * An authorization started on one instance completes on the other (issue 37's acceptance): two
 * instances behind one PUBLIC_URL (the load balancer's name) on one PostgreSQL database; every
 * step of the flow lands on the instance that did not serve the one before. Needs a server
 * database: TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres.
 */
const PUBLIC_URL = 'http://sso.portcullis.test';
const CALLBACK = 'http://127.0.0.1:9/callback';

describeWithServer('OpenID Provider on two instances', () => {
  const instances = useTwoInstances({ PUBLIC_URL, SWEEP_INTERVAL_MS: '86400000' });

  /** The load balancer: the provider's own URL, sent to the given instance. */
  const via = (instance: TestApp, url: string): string => {
    const parsed = new URL(url);
    return `${instance.url}${parsed.pathname}${parsed.search}`;
  };

  it('authorize on A, login on B, consent page on A, consent on B, code exchange on A, userinfo on B', async () => {
    const { a, b, install } = instances;
    const tenant = await createMembership(a, install.admin);
    const app = await createApplication(a, tenant.admin, { oidc: { redirect_uris: [CALLBACK] } } as Record<string, unknown>);
    const user = await createUser(a, tenant.admin);
    const verifier = randomBytes(32).toString('base64url');
    const query = new URLSearchParams({
      client_id: app.id,
      redirect_uri: CALLBACK,
      response_type: 'code',
      scope: 'openid profile',
      state: 'xyz',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const browser = new PageBrowser();
    const started = await browser.request(`${a.url}/oidc/${tenant.membershipId}/authorize?${query.toString()}`);
    expect(started.status).toBe(303);
    expect(started.location!.startsWith(`${PUBLIC_URL}/oidc/${tenant.membershipId}/interaction/`)).toBe(true);
    const login = await browser.request(via(b, started.location!));
    expect(login.html).toContain('name="password"');
    const afterLogin = await browser.request(via(a, formAction(login.html)), { form: { username: user.username, password: user.password } });
    expect(afterLogin.status).toBe(303);
    const consent: PageAnswer = await browser.request(via(a, afterLogin.location!));
    expect(consent.html).toContain('name="decision"');
    const landed = await browser.request(via(b, formAction(consent.html)), { form: { decision: 'allow' } });
    expect(landed.status).toBe(303);
    const callback = new URL(landed.location!);
    expect(callback.searchParams.get('iss')).toBe(`${PUBLIC_URL}/oidc/${tenant.membershipId}`);

    const token = await a
      .http()
      .post(`/oidc/${tenant.membershipId}/token`)
      .auth(app.id, app.secret)
      .type('form')
      .send({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CALLBACK, code_verifier: verifier });
    expect(token.status).toBe(200);
    const info = await b.http().get(`/oidc/${tenant.membershipId}/userinfo`).set('Authorization', `Bearer ${token.body.access_token}`);
    expect(info.status).toBe(200);
    expect(info.body).toMatchObject({ sub: user._id, preferred_username: user.username });
  });
});
