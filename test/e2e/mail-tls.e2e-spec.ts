import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { type TestApp, TEST_SETUP_TOKEN } from '../support/app';
import { createUser, eventually, setupInstallation, type SignedIn, unique } from '../support/api';
import { MailCatcher } from '../support/mail-catcher';
import { buildServiceIntoTemp, type RunningService, startService } from '../support/operations';
import { ALLOW_LOOPBACK_RECEIVERS } from '../support/webhook-receiver';

// server pass: none. The service here runs on its own embedded database (memory://), whatever
// TEST_DATABASE_URL says: CI's second pass, on the PostgreSQL server, would run the very same tests
// again, and leaves this file out (.ci/run).

/*
 * STARTTLS and implicit TLS against smtp-server on 127.0.0.1 with a self-signed certificate for
 * `localhost`. NODE_EXTRA_CA_CERTS is read when Node starts, so the service runs as its own
 * process with the certificate as an extra CA: certificates are verified, never skipped.
 */
describe('mail over TLS (self-signed certificate trusted through NODE_EXTRA_CA_CERTS)', () => {
  let dir: string;
  let starttls: MailCatcher;
  let implicit: MailCatcher;
  let build: { main: string; remove: () => void };
  let service: RunningService;
  let admin: SignedIn;
  let membershipName: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'portcullis-mail-tls-'));
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '2', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'], { stdio: 'ignore' });
    const key = readFileSync(keyPath, 'utf8');
    const cert = readFileSync(certPath, 'utf8');
    starttls = await MailCatcher.start({ starttls: true, key, cert });
    implicit = await MailCatcher.start({ secure: true, key, cert });
    build = await buildServiceIntoTemp();
    service = await startService(build.main, { ...ALLOW_LOOPBACK_RECEIVERS, DATABASE_URL: 'memory://', NODE_EXTRA_CA_CERTS: certPath, SETUP_TOKEN: TEST_SETUP_TOKEN, NODE_ENV: 'test' });
    // setupInstallation speaks HTTP only: the process's URL is all it needs.
    const remote = { url: service.url, http: () => request(service.url) } as unknown as TestApp;
    const installation = await setupInstallation(remote);
    admin = installation.admin;
    membershipName = installation.membership.name as string;
  }, 120_000);
  afterAll(async () => {
    service?.kill();
    await service?.exited;
    build?.remove();
    await starttls?.close();
    await implicit?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const http = () => request(service.url);

  async function setProviders(providers: object[]): Promise<void> {
    const res = await http().put(`/memberships/${admin.membershipId}`).set('Authorization', admin.auth).send({ name: membershipName, mail_providers: providers });
    expect(res.status).toBe(200);
  }

  const testProvider = async (slug: string) => (await http().post(`/memberships/${admin.membershipId}/mail-providers/${slug}/test`).set('Authorization', admin.auth)).body;

  it('verifies the certificate against the configured name: STARTTLS and implicit TLS pass, an IP literal the certificate does not name fails', async () => {
    await setProviders([
      { slug: 'starttls', name: 'STARTTLS', type: 'smtp', host: 'localhost', port: starttls.port, tls: 'starttls' },
      { slug: 'implicit', name: 'Implicit TLS', type: 'smtp', host: 'localhost', port: implicit.port, tls: 'tls' },
      { slug: 'by-address', name: 'By address', type: 'smtp', host: '127.0.0.1', port: implicit.port, tls: 'tls' },
    ]);
    expect(await testProvider('starttls')).toEqual({ ok: true });
    expect(await testProvider('implicit')).toEqual({ ok: true });
    const mismatch = await testProvider('by-address');
    expect(mismatch.ok).toBe(false);
    expect(mismatch.error).toMatch(/IP: 127\.0\.0\.1|altnames|certificate/i);
  });

  it.each([
    ['starttls', () => starttls],
    ['implicit', () => implicit],
  ])('delivers a mail hook message over %s', async (slug, catcher) => {
    const hook = await http()
      .post(`/memberships/${admin.membershipId}/mailhooks`)
      .set('Authorization', admin.auth)
      .send({ name: unique(`tls-${slug}`), event: 'UserCreated', mail_provider: slug, from_address: 'no-reply@example.com', mail_subject: 'Welcome', mail_template: '<p>Hi {{user.username}}</p>', send_to_utilizer: true });
    expect(hook.status).toBe(201);
    const user = await createUser({ http } as unknown as TestApp, admin);
    const mail = await eventually(async () => catcher().mails.find((candidate) => candidate.to.includes(user.email_address)), `the mail over ${slug}`, 20_000);
    expect(mail.body).toBe(`<p>Hi ${user.username}</p>`);
    await http().delete(`/memberships/${admin.membershipId}/mailhooks/${hook.body._id}`).set('Authorization', admin.auth).expect(204);
  });
});
