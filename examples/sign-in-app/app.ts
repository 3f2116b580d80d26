/**
 * A web application that signs its users in with Portcullis, through any certified OpenID Connect
 * client library: here openid-client, with the authorization code flow, PKCE (S256), state and
 * nonce. Nothing in it knows Portcullis beyond the issuer's URL.
 *
 *   PORTCULLIS_ISSUER=http://localhost:3000/oidc/<membership id> CLIENT_ID=<application id> \
 *     CLIENT_SECRET=<secret> npm run example:sign-in
 *
 * The application must be an OpenID Provider client of the membership, with the redirect URI
 * `<APP_URL>/callback` (APP_URL defaults to http://127.0.0.1:<PORT>, PORT to 4002) and, for the
 * sign-out link, `<APP_URL>/` among its post_logout_redirect_uris. Listens on HOST (default
 * 127.0.0.1). Sessions live in this process's memory: it is an example, not a session store.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express, type Request, type Response } from 'express';
import * as oidc from 'openid-client';

export interface SignInAppSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Where the browser reaches this app, without a trailing slash. */
  appUrl: string;
}

/** What the app keeps per browser: the pending authorization, then who signed in. */
interface BrowserSession {
  pending?: { state: string; nonce: string; codeVerifier: string };
  user?: { sub: string; name?: string; email?: string; idToken: string; accessToken: string };
}

const SESSION_COOKIE = 'sign_in_example';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

function page(res: Response, body: string, status = 200): void {
  res.status(status).type('html').send(`<!doctype html><html><head><title>Sign-in example</title></head><body>${body}</body></html>`);
}

function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/** Builds the app (not listening yet): discovery runs once, here. */
export async function createApp(settings: SignInAppSettings): Promise<Express> {
  // Plain http is for a service on this machine only; openid-client refuses it unless told.
  const execute = new URL(settings.issuer).protocol === 'http:' ? [oidc.allowInsecureRequests] : [];
  const config = await oidc.discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, { execute });
  const redirectUri = `${settings.appUrl}/callback`;
  const sessions = new Map<string, BrowserSession>();

  function sessionOf(req: Request, res: Response): BrowserSession {
    const id = cookieOf(req, SESSION_COOKIE);
    const existing = id ? sessions.get(id) : undefined;
    if (existing) return existing;
    const fresh: BrowserSession = {};
    const newId = randomBytes(24).toString('base64url');
    sessions.set(newId, fresh);
    res.cookie(SESSION_COOKIE, newId, { httpOnly: true, sameSite: 'lax', path: '/' });
    return fresh;
  }

  const app = express();
  app.disable('x-powered-by');

  app.get('/', (req, res) => {
    const { user } = sessionOf(req, res);
    if (!user) return page(res, '<h1>Not signed in</h1><p><a href="/login">Sign in with Portcullis</a></p>');
    page(
      res,
      `<h1>Signed in as <span id="user">${escapeHtml(user.name ?? user.sub)}</span></h1>` +
        `<p>e-mail: <span id="email">${escapeHtml(user.email ?? '')}</span>, subject: <span id="sub">${escapeHtml(user.sub)}</span></p>` +
        '<p><a href="/logout">Sign out</a></p>',
    );
  });

  app.get('/login', async (req, res) => {
    const session = sessionOf(req, res);
    const codeVerifier = oidc.randomPKCECodeVerifier();
    session.pending = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid profile email',
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state: session.pending.state,
      nonce: session.pending.nonce,
    });
    res.redirect(url.href);
  });

  app.get('/callback', async (req, res) => {
    const session = sessionOf(req, res);
    const pending = session.pending;
    session.pending = undefined;
    if (!pending) return page(res, '<h1>No sign-in in progress</h1><p><a href="/login">Sign in</a></p>', 400);
    try {
      // openid-client checks the state, the issuer (`iss`), the ID token's signature, audience and nonce.
      const tokens = await oidc.authorizationCodeGrant(config, new URL(req.originalUrl, settings.appUrl), {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims || !tokens.id_token) throw new Error('no ID token');
      const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      session.user = {
        sub: claims.sub,
        name: typeof info.name === 'string' ? info.name : info.preferred_username,
        email: info.email,
        idToken: tokens.id_token,
        accessToken: tokens.access_token,
      };
      res.redirect('/');
    } catch (error) {
      page(res, `<h1>Sign-in failed</h1><p>${escapeHtml(error instanceof Error ? error.message : String(error))}</p>`, 400);
    }
  });

  app.get('/logout', (req, res) => {
    const session = sessionOf(req, res);
    const idToken = session.user?.idToken;
    session.user = undefined;
    if (!idToken) return res.redirect('/');
    res.redirect(oidc.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: `${settings.appUrl}/` }).href);
  });

  return app;
}

export async function main(): Promise<void> {
  const host = process.env['HOST'] ?? '127.0.0.1';
  const port = Number(process.env['PORT'] ?? 4002);
  // Listen first: the redirect URI names the port, which may be chosen by the system (PORT=0).
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const bound = server.address() as AddressInfo;
  const appUrl = (process.env['APP_URL'] ?? `http://127.0.0.1:${bound.port}`).replace(/\/+$/, '');
  const app = await createApp({
    issuer: process.env['PORTCULLIS_ISSUER'] ?? '',
    clientId: process.env['CLIENT_ID'] ?? '',
    clientSecret: process.env['CLIENT_SECRET'] ?? '',
    appUrl,
  });
  server.on('request', app);
  console.log(`Sign-in example on http://${bound.address}:${bound.port} (open ${appUrl}/)`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
