import { eq } from 'drizzle-orm';
import { calculateJwkThumbprint, createRemoteJWKSet, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';
import { DATABASE, type Database } from '../../src/database/database';
import { signingKeys } from '../../src/database/schema';
import { as, createMembership, createUser, expectErrorBody, queryEvents, signIn, unique, updateMembership, useInstallation } from '../support/api';
import type { TestApp } from '../support/app';

/*
 * Each membership's OpenID Provider signing keys (contract "Single sign-on", docs/oidc.md "Keys"):
 * the JWKS at the issuer, made on first use, and rotation with overlap. Tokens are signed here with
 * the private key read from the database (the service signs nothing with it yet), and verified
 * by jose's remote JWKS against the running service.
 */
describe('OpenID Provider signing keys', () => {
  const suite = useInstallation();

  const jwksPath = (membershipId: string) => `/oidc/${membershipId}/jwks`;

  /** A token signed with the membership's key `kid`, as its OpenID Provider will sign. */
  async function signedWith(t: TestApp, kid: string): Promise<string> {
    const { db } = t.app.get<Database>(DATABASE);
    const [row] = await db.select().from(signingKeys).where(eq(signingKeys.id, kid));
    const key = await importJWK(row.privateJwk as JWK, 'ES256');
    return new SignJWT({ sub: 'someone' }).setProtectedHeader({ alg: 'ES256', kid }).setIssuedAt().setExpirationTime('5m').sign(key);
  }

  it('a membership\'s JWKS holds one ES256 public key, made once even when asked in parallel, its kid the RFC 7638 thumbprint', async () => {
    const tenant = await createMembership(suite.t, suite.admin);
    const answers = await Promise.all(Array.from({ length: 4 }, () => suite.t.http().get(jwksPath(tenant.membershipId))));
    for (const res of answers) expect(res.status).toBe(200);
    const kids = new Set(answers.map((res) => res.body.keys.map((key: JWK) => key.kid).join()));
    expect(kids.size).toBe(1);
    const [key] = answers[0].body.keys as JWK[];
    expect(answers[0].body.keys).toHaveLength(1);
    expect(key).toEqual({ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: expect.any(String), alg: 'ES256', use: 'sig' });
    expect(key.kid).toBe(await calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x, y: key.y }));
    expect(JSON.stringify(answers[0].body)).not.toMatch(/"d"/);
    // Public: no credentials needed, and another membership has a key of its own.
    const other = await createMembership(suite.t, suite.admin);
    const otherKeys = (await suite.t.http().get(jwksPath(other.membershipId))).body.keys as JWK[];
    expect(otherKeys.map((k) => k.kid)).not.toContain(key.kid);
  });

  it('a rotation keeps the replaced key in the JWKS: old tokens still verify, new ones carry the new kid; then the overlap ends', async () => {
    const tenant = await createMembership(suite.t, suite.admin);
    // The overlap is twice the longest token lifetime: 2 s here.
    await updateMembership(suite.t, tenant, { expires_in: 1, refresh_token_expires_in: 1 });
    const jwks = createRemoteJWKSet(new URL(`${suite.t.url}${jwksPath(tenant.membershipId)}`), { cooldownDuration: 0, cacheMaxAge: 0 });
    const [first] = (await suite.t.http().get(jwksPath(tenant.membershipId))).body.keys as JWK[];
    const oldToken = await signedWith(suite.t, first.kid!);
    expect((await jwtVerify(oldToken, jwks)).protectedHeader.kid).toBe(first.kid);

    const rotated = await as(suite.t, tenant.admin).post(`/memberships/${tenant.membershipId}/signing-keys/rotate`, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ kid: expect.any(String), alg: 'ES256', retired_kid: first.kid, retired_until: expect.any(String) });
    expect(rotated.body.kid).not.toBe(first.kid);
    const listed = (await suite.t.http().get(jwksPath(tenant.membershipId))).body.keys as JWK[];
    expect(listed.map((k) => k.kid)).toEqual([rotated.body.kid, first.kid]);
    const newToken = await signedWith(suite.t, rotated.body.kid);
    expect((await jwtVerify(newToken, jwks)).protectedHeader.kid).toBe(rotated.body.kid);
    expect((await jwtVerify(oldToken, jwks)).protectedHeader.kid).toBe(first.kid);

    // SigningKeyRotated names the kids; no private value in the event.
    const [event] = await queryEvents(suite.t, tenant.admin, { event_type: 'SigningKeyRotated' });
    expect(event.document).toEqual({ kid: rotated.body.kid, alg: 'ES256', retired_kid: first.kid });
    expect(JSON.stringify(event)).not.toMatch(/"d"/);

    await new Promise((resolve) => setTimeout(resolve, 2500));
    const after = (await suite.t.http().get(jwksPath(tenant.membershipId))).body.keys as JWK[];
    expect(after.map((k) => k.kid)).toEqual([rotated.body.kid]);
    await expect(jwtVerify(oldToken, jwks)).rejects.toThrow();
    expect((await jwtVerify(newToken, jwks)).protectedHeader.kid).toBe(rotated.body.kid);
  });

  it('rotation needs memberships.update of that membership; the JWKS of no membership is 404', async () => {
    const tenant = await createMembership(suite.t, suite.admin);
    const user = await createUser(suite.t, tenant.admin, { password: 'a long enough password' });
    const plain = await signIn(suite.t, tenant.membershipId, user.username, 'a long enough password');
    expectErrorBody(await as(suite.t, plain).post(`/memberships/${tenant.membershipId}/signing-keys/rotate`, {}), 403, 'AccessDenied');
    const other = await createMembership(suite.t, suite.admin);
    expect((await as(suite.t, tenant.admin).post(`/memberships/${other.membershipId}/signing-keys/rotate`, {})).status).toBe(403);
    expectErrorBody(await suite.t.http().get(jwksPath(unique('no-such-membership'))), 404, 'MembershipNotFound');
    expect((await suite.t.http().post(`/memberships/${tenant.membershipId}/signing-keys/rotate`).send({})).status).toBe(401);
  });
});
