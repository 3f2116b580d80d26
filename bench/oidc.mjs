#!/usr/bin/env node
/**
 * The OpenID Provider beside npm oidc-provider (issue 37): the token endpoint's authorization code
 * exchange and userinfo, each measured on the service and on the peer in the same run, in
 * alternating slices. Not a test: it prints figures and never fails on a time.
 *
 *   npm run build && npm run bench:oidc      # about 3 minutes; needs PostgreSQL on 127.0.0.1:5432
 *
 * Both run as their own processes on one fresh database of the local PostgreSQL server, with the
 * same pool size, ES256 ID tokens and one confidential client (Basic authentication, PKCE S256,
 * scopes `openid profile email`) whose user has signed in once and consented. Codes are single
 * use, so before each exchange slice each side mints the codes it will need (GET authorize with
 * the single sign-on cookie answers with a code at once); minting is not timed. Userinfo reads
 * one access token over and over. PostgreSQL is settled (CHECKPOINT) before each timed slice.
 * Printed: requests per second of each side, the ratio (target: at least 1.0 on both), and the
 * CPU µs per request of each server process and of PostgreSQL (Linux /proc).
 *
 * BENCH_SLICES (3) slices each way; BENCH_SLICE_SECONDS (4) of userinfo, and BENCH_CODES_PER_SECOND
 * (2000) × that many codes to exchange; BENCH_CONNECTIONS (16);
 * BENCH_PROFILE_DIR: where the service writes a CPU profile (`--cpu-prof`) as it stops.
 * The two cores of this machine are shared: the figures move ±15% from minute to minute.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import {
  api,
  buildIfMissing,
  createDatabase,
  expectStatus,
  freePort,
  int,
  logAs,
  MAIN,
  runMain,
  SERVER_URL,
  setUpAdmin,
  start,
  waitFor,
} from './support.mjs';

const log = logAs('oidc');
/** Linux's USER_HZ: /proc counts CPU time in these ticks. */
const CLOCK_TICKS = 100;
const SLICES = int('BENCH_SLICES', 3);
const SLICE_SECONDS = int('BENCH_SLICE_SECONDS', 4);
const CONNECTIONS = int('BENCH_CONNECTIONS', 16);
const PASSWORD = 'bench password 0123456789';
const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const SCOPE = 'openid profile email';
const VERIFIER = randomBytes(32).toString('base64url');
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');
/** Codes per exchange slice, per second of SLICE_SECONDS: each side exchanges all of them. */
const CODES_PER_SECOND = int('BENCH_CODES_PER_SECOND', 2000);

/** A cookie jar and a redirect follower that fills the sign-in and consent forms it meets. */
class Browser {
  cookies = new Map();

  header() {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  keep(res) {
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
    }
  }

  /** Follows redirects and forms from `url` until one leads to REDIRECT_URI: its `code`. */
  async codeFrom(url, fields) {
    let next = { url, method: 'GET', body: undefined };
    for (let step = 0; step < 12; step++) {
      const res = await fetch(next.url, {
        method: next.method,
        redirect: 'manual',
        headers: { cookie: this.header(), ...(next.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        body: next.body,
      });
      this.keep(res);
      const location = res.headers.get('location');
      if (location) {
        const target = new URL(location, next.url);
        if (target.href.startsWith(REDIRECT_URI)) {
          const code = target.searchParams.get('code');
          if (!code) throw new Error(`no code: ${target.href}`);
          return code;
        }
        next = { url: target.href, method: 'GET', body: undefined };
        continue;
      }
      const html = await res.text();
      const form = /<form[^>]*action="([^"]+)"/i.exec(html);
      if (!form) throw new Error(`${res.status} without a redirect or a form: ${html.slice(0, 300)}`);
      const body = new URLSearchParams();
      for (const input of html.matchAll(/<input[^>]*name="([^"]+)"[^>]*?(?:value="([^"]*)")?[^>]*>/gi)) body.set(input[1], input[2] ?? '');
      for (const [name, value] of Object.entries(fields)) if (body.has(name) || name === 'decision') body.set(name, value);
      next = { url: new URL(form[1].replaceAll('&amp;', '&'), next.url).href, method: 'POST', body: body.toString() };
    }
    throw new Error(`no code after 12 steps from ${url}`);
  }
}

function authorizeUrl(authorizationEndpoint, clientId) {
  const url = new URL(authorizationEndpoint);
  url.search = new URLSearchParams({
    client_id: clientId,
    response_type: 'code',
    scope: SCOPE,
    redirect_uri: REDIRECT_URI,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
  }).toString();
  return url.href;
}

/**
 * `count` codes, 16 at a time. The first sign-in goes alone: the pages' interaction cookie is one
 * per browser, and after it the single sign-on cookie answers every authorization at once.
 */
async function mint(side, count) {
  const codes = [];
  if (!side.signedIn) {
    codes.push(await side.browser.codeFrom(authorizeUrl(side.metadata.authorization_endpoint, side.clientId), side.fields));
    side.signedIn = true;
  }
  const worker = async () => {
    while (codes.length < count) codes.push(await side.browser.codeFrom(authorizeUrl(side.metadata.authorization_endpoint, side.clientId), side.fields));
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return codes.slice(0, count);
}

/** Autocannon for SLICE_SECONDS: requests per second of 2xx answers, and how many. A non-2xx fails the run. */
async function measure(options) {
  const result = await autocannon({ connections: CONNECTIONS, duration: SLICE_SECONDS, ...options });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${options.url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rate: result.requests.total / result.duration, requests: result.requests.total };
}

/** CPU seconds so far of a process (Linux /proc; 0 where it cannot be read). */
function cpuSecondsOf(pid) {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds so far of the side's server process and of every PostgreSQL process on the machine. */
function cpuNow(side) {
  let postgres = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres') postgres += cpuSecondsOf(pid);
    } catch {
      // The process ended while the list was read.
    }
  }
  return { server: cpuSecondsOf(side.entry.child.pid), postgres };
}

/**
 * Writes out what PostgreSQL has pending (CHECKPOINT) and lets its background work end, so that a
 * slice does not pay for the writes of the one before it (8,000 exchanges leave more to flush on
 * the service's side, whose exchange also records an event, and userinfo came right after).
 */
async function settle(databaseUrl) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('checkpoint');
  } finally {
    await client.end();
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
}

/** Runs one slice; answers its rate and the CPU µs per request it cost the side's server and PostgreSQL. */
async function withCpu(side, slice) {
  await settle(side.databaseUrl);
  const before = cpuNow(side);
  const { rate, requests } = await slice();
  const after = cpuNow(side);
  return { rate, serverUs: ((after.server - before.server) / requests) * 1e6, postgresUs: ((after.postgres - before.postgres) / requests) * 1e6 };
}

/**
 * Exchanges each minted code once (CODES_PER_SECOND × SLICE_SECONDS of them). Timed by its own
 * clock from the first request to the last answer: autocannon notices the end of its `amount`
 * only at a whole second, which would divide the slice by up to a second too long.
 */
async function exchangeSlice(side, codes) {
  let next = 0;
  let answered = 0;
  let firstSentAt = 0;
  let lastAnsweredAt = 0;
  const result = await autocannon({
    connections: CONNECTIONS,
    url: side.metadata.token_endpoint,
    amount: codes.length,
    requests: [
      {
        method: 'POST',
        headers: { authorization: side.basic, 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest: (request) => {
          if (next === 0) firstSentAt = performance.now();
          return {
            ...request,
            body: new URLSearchParams({ grant_type: 'authorization_code', code: codes[next++], redirect_uri: REDIRECT_URI, code_verifier: VERIFIER }).toString(),
          };
        },
        onResponse: () => {
          answered += 1;
          lastAnsweredAt = performance.now();
        },
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${side.metadata.token_endpoint}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rate: answered / ((lastAnsweredAt - firstSentAt) / 1000), requests: answered };
}

function userinfoSlice(side) {
  return measure({ url: side.metadata.userinfo_endpoint, headers: { authorization: `Bearer ${side.accessToken}` } });
}

async function tokensOf(side) {
  const [code] = await mint(side, 1);
  const res = await fetch(side.metadata.token_endpoint, {
    method: 'POST',
    headers: { authorization: side.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: VERIFIER }),
  });
  if (!res.ok) throw new Error(`${side.name} exchange: ${res.status} ${await res.text()}`);
  return res.json();
}

async function startService(databaseUrl) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const setupToken = randomBytes(24).toString('hex');
  // BENCH_PROFILE_DIR: the service writes a V8 CPU profile there when it stops (for `node --cpu-prof` readers).
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const entry = start('service', ['--max-semi-space-size=32', ...profile, MAIN], {
    NODE_ENV: 'production',
    LOG_LEVEL: 'error',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_URL: base,
    DATABASE_URL: databaseUrl,
    SETUP_TOKEN: setupToken,
  });
  await waitFor(`${base}/healthcheck`, {}, 60_000, entry);
  const { membershipId, auth } = await setUpAdmin(base, setupToken, PASSWORD);
  const username = `bench-${randomBytes(3).toString('hex')}`;
  expectStatus(
    await api(base, 'POST', `/memberships/${membershipId}/users`, {
      auth,
      body: { username, email_address: `${username}@example.com`, password: PASSWORD, firstname: 'Bench', lastname: 'User' },
    }),
    201,
    'user',
  );
  const app = expectStatus(
    await api(base, 'POST', `/memberships/${membershipId}/applications`, {
      auth,
      body: { name: 'bench client', oidc: { redirect_uris: [REDIRECT_URI], require_consent: false } },
    }),
    201,
    'client',
  );
  const metadata = await (await fetch(`${base}/oidc/${membershipId}/.well-known/openid-configuration`)).json();
  return {
    name: 'service',
    entry,
    databaseUrl,
    metadata,
    clientId: app._id,
    basic: `Basic ${Buffer.from(`${encodeURIComponent(app._id)}:${encodeURIComponent(app.secret)}`).toString('base64')}`,
    browser: new Browser(),
    fields: { username, password: PASSWORD, decision: 'allow' },
  };
}

async function startPeer(databaseUrl) {
  const port = await freePort();
  const clientId = 'bench-client';
  const clientSecret = randomBytes(24).toString('hex');
  const entry = start('oidc-provider', [join('bench', 'peer-oidc-sso.mjs')], {
    PEER_PORT: String(port),
    PEER_DATABASE_URL: databaseUrl,
    PEER_CLIENT_ID: clientId,
    PEER_CLIENT_SECRET: clientSecret,
    PEER_REDIRECT_URI: REDIRECT_URI,
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/.well-known/openid-configuration`, {}, 30_000, entry);
  const metadata = await (await fetch(`${base}/.well-known/openid-configuration`)).json();
  return {
    name: 'oidc-provider',
    entry,
    databaseUrl,
    metadata,
    clientId,
    basic: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
    browser: new Browser(),
    fields: {},
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (value) => (Number.isFinite(value) ? value.toFixed(value >= 100 ? 0 : 2) : '-');

async function main() {
  buildIfMissing();
  const databaseUrl = await createDatabase(SERVER_URL, 'bench_oidc');
  const service = await startService(databaseUrl);
  const peer = await startPeer(databaseUrl);
  for (const side of [service, peer]) side.accessToken = (await tokensOf(side)).access_token;
  // Each slice's rate and CPU µs per request: where each side's time goes (the machine's cores are shared).
  const results = { exchange: { service: [], peer: [] }, userinfo: { service: [], peer: [] } };
  for (let slice = 0; slice < SLICES; slice++) {
    // Alternate which side goes first, so neither always runs on the warmer (or busier) machine.
    const order = slice % 2 === 0 ? [service, peer] : [peer, service];
    for (const side of order) {
      const codes = await mint(side, CODES_PER_SECOND * SLICE_SECONDS);
      const key = side === service ? 'service' : 'peer';
      results.exchange[key].push(await withCpu(side, () => exchangeSlice(side, codes)));
      results.userinfo[key].push(await withCpu(side, () => userinfoSlice(side)));
      log(`slice ${slice + 1}/${SLICES} ${side.name}: exchange ${fmt(results.exchange[key].at(-1).rate)}/s, userinfo ${fmt(results.userinfo[key].at(-1).rate)}/s`);
    }
  }
  const lines = ['', `route          service req/s   oidc-provider req/s   ratio   (medians of ${SLICES} slices of ${SLICE_SECONDS} s, ${CONNECTIONS} connections)`];
  const of = (route, key, field) => median(results[route][key].map((result) => result[field]));
  const routes = [
    ['exchange', 'code exchange'],
    ['userinfo', 'userinfo     '],
  ];
  for (const [route, label] of routes) {
    const ours = of(route, 'service', 'rate');
    const theirs = of(route, 'peer', 'rate');
    lines.push(`${label}  ${fmt(ours).padStart(13)}   ${fmt(theirs).padStart(19)}   ${fmt(ours / theirs).padStart(5)}`);
  }
  lines.push('', 'CPU µs per request (medians)   service: itself, PostgreSQL   oidc-provider: itself, PostgreSQL');
  for (const [route, label] of routes) {
    const cells = ['service', 'peer'].map((key) => `${fmt(of(route, key, 'serverUs')).padStart(6)}  ${fmt(of(route, key, 'postgresUs')).padStart(6)}`);
    lines.push(`${label}                  ${cells[0]}                 ${cells[1]}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

await runMain(main);
