import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import { closedPort } from './ports';

/** A client of the test provider, as oidc-provider takes it. */
export interface OidcTestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  token_endpoint_auth_method?: string;
}

export interface OidcTestProviderOptions {
  /** Private signing keys (with kid). */
  keys: JWK[];
  clients: OidcTestClient[];
  /** Account id (the `sub`) to its claims (email, email_verified, given_name, family_name). */
  accounts: Record<string, Record<string, unknown>>;
  /** Token endpoint authentication methods the provider offers (discovery `token_endpoint_auth_methods_supported`). */
  clientAuthMethods?: string[];
  /** Reuse a port (restart with other keys at the same issuer). */
  port?: number;
}

export interface OidcTestProvider {
  issuer: string;
  port: number;
  stop(): Promise<void>;
}

/** A private key as jose's generateKeyPair answers it. */
export type SigningPrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

/** An RS256 signing key pair; `privateJwk` carries the kid the provider publishes. */
export async function newSigningKey(kid: string, alg: 'RS256' | 'ES256' = 'RS256'): Promise<{ privateJwk: JWK; privateKey: SigningPrivateKey }> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { privateJwk: { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' }, privateKey };
}

/**
 * Starts oidc-provider on 127.0.0.1 in a child process (it ships ES modules only), on a closed
 * port outside the kernel's ephemeral range unless `port` is given: a test that restarts it on the
 * same port (same issuer) then finds that port still free.
 */
export async function startOidcProvider(options: OidcTestProviderOptions): Promise<OidcTestProvider> {
  const config = { ...options, port: options.port ?? (await closedPort()) };
  const child: ChildProcess = spawn(process.execPath, [join(__dirname, 'oidc-provider-server.mjs')], {
    env: { ...process.env, NODE_ENV: 'test', OIDC_TEST_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  return new Promise((resolve, reject) => {
    let output = '';
    child.once('exit', (code) => reject(new Error(`oidc-provider exited (${code}): ${errors}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening (\d+)/.exec(output);
      if (!match) return;
      const port = Number(match[1]);
      resolve({
        issuer: `http://127.0.0.1:${port}`,
        port,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** PKCE (RFC 7636, S256): a verifier and its challenge. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** A minimal cookie jar for the provider's interaction cookies (all on 127.0.0.1). */
class CookieJar {
  private readonly cookies = new Map<string, string>();
  store(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const index = pair.indexOf('=');
      this.cookies.set(pair.slice(0, index).trim(), pair.slice(index + 1).trim());
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/**
 * Drives the authorization code flow with PKCE over HTTP as a browser would (the provider's
 * development login and consent pages), and answers the code it redirects back with.
 */
export async function authorizationCode(
  provider: OidcTestProvider,
  params: { clientId: string; redirectUri: string; accountId: string; codeChallenge: string; nonce?: string },
): Promise<string> {
  const jar = new CookieJar();
  const query = new URLSearchParams({
    client_id: params.clientId,
    redirect_uri: params.redirectUri,
    response_type: 'code',
    scope: 'openid email profile',
    code_challenge: params.codeChallenge,
    code_challenge_method: 'S256',
    ...(params.nonce ? { nonce: params.nonce } : {}),
  });
  let url = `${provider.issuer}/auth?${query.toString()}`;
  let method = 'GET';
  let body: string | undefined;
  for (let step = 0; step < 12; step++) {
    // Each step: one request; a redirect is followed, a form page is submitted.
    const response = await fetch(url, {
      method,
      body,
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    jar.store(response);
    const page = await response.text();
    const location = response.headers.get('location');
    const prompt = response.status === 200 ? /name="prompt" value="(login|consent)"/.exec(page)?.[1] : undefined;
    if (prompt) {
      // A login or consent page: submit it as its form would.
      method = 'POST';
      body = new URLSearchParams(prompt === 'login' ? { prompt, login: params.accountId, password: 'any' } : { prompt }).toString();
      continue;
    }
    if (!location) throw new Error(`authorization flow stopped at ${url}: ${response.status}`);
    const next = new URL(location, url);
    if (next.href.startsWith(params.redirectUri)) {
      const code = next.searchParams.get('code');
      if (!code) throw new Error(`no code in the redirect: ${next.search}`);
      return code;
    }
    url = next.href;
    method = 'GET';
    body = undefined;
  }
  throw new Error('authorization flow did not finish');
}

/** An id token signed as a test needs it: `email_verified` true, issued now for 300 s unless the claims say otherwise. */
export function signIdToken(
  claims: JWTPayload,
  signer: { issuer: string; audience: string; key: SigningPrivateKey | Uint8Array; alg?: string; kid?: string },
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ email_verified: true, ...claims })
    .setProtectedHeader({ alg: signer.alg ?? 'RS256', kid: signer.kid ?? 'key-1' })
    .setIssuer(signer.issuer)
    .setAudience(signer.audience)
    .setIssuedAt(claims.iat ?? now)
    .setExpirationTime(claims.exp ?? now + 300)
    .sign(signer.key);
}
