import { resolve } from 'node:path';
import ipaddr from 'ipaddr.js';
import { type OutboundAllowList, parseOutboundAllow } from './outbound-allow';

export type DatabaseTarget =
  | {
      kind: 'embedded';
      dataDir: string | null; // null: in memory
      /**
       * In memory only, and never from the environment: a data-directory image (PGlite's
       * dumpDataDir) to start from instead of an empty cluster. The tests boot each app from one
       * migrated image rather than running initdb and every migration per boot; migrations still
       * run on it, and find nothing left to apply.
       */
      image?: Blob;
    }
  | {
      kind: 'server';
      url: string;
      poolSize: number;
      /**
       * DATABASE_STATEMENT_TIMEOUT_MS: the longest any one statement of the pool may run (the
       * server's statement_timeout; 0: none). Migrations are exempt. docs/bounded-work.md says why.
       */
      statementTimeoutMs?: number;
    };

export interface AppConfig {
  port: number;
  host: string;
  database: DatabaseTarget;
  nodeEnv: 'development' | 'production' | 'test';
  setupToken: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  webhookTimeoutMs: number;
  /** WEBHOOK_LEASE_SECONDS: how long a claimed delivery is this instance's before another may claim it again. */
  webhookLeaseSeconds: number;
  /** WEBHOOK_RETRY_BASE_MS: the wait before a delivery's second attempt; doubled for each later one. */
  webhookRetryBaseMs: number;
  /** WEBHOOK_DELIVERY_RETENTION_DAYS: how long finished deliveries are kept. */
  webhookDeliveryRetentionDays: number;
  /** WEBHOOK_QUEUE_CAPACITY: deliveries waiting in memory for a free call slot; more stay pending in the database. */
  webhookQueueCapacity: number;
  /**
   * WEBHOOK_DISPATCH: false ("off") for an instance that records deliveries but never makes the
   * calls, leaving them to the instances that dispatch (woken by NOTIFY): API instances then spend
   * no request-thread time on calls. Server database only.
   */
  webhookDispatch: boolean;
  /** WEBHOOK_CLAIM_INTERVAL_MS: how often a dispatching instance looks for due deliveries nobody told it of (retries of others, expired leases). */
  webhookClaimIntervalMs: number;
  /** EVENT_STREAMS_PER_MEMBERSHIP: open event streams of one membership on this instance; more answer 429 TooManyStreams. */
  eventStreamsPerMembership: number;
  /** Per discovery, JWKS or token endpoint call of an identity provider. */
  providerTimeoutMs: number;
  /** How long an instance serves a provider's configuration from its cache. */
  providerCacheTtlSeconds: number;
  /** How long a provider's discovery document and keys are reused. */
  providerMetadataTtlSeconds: number;
  /** MAIL_TIMEOUT_MS: per SMTP attempt (connection, greeting, each command). */
  mailTimeoutMs: number;
  /** MAIL_TRY_COUNT: attempts per mail message. */
  mailTryCount: number;
  bodyLimitBytes: number;
  shutdownDrainMs: number;
  sweepIntervalMs: number;
  /** How long past its expiry a token record is kept before the sweeper deletes it. */
  sweepGraceSeconds: number;
  /** TRUST_PROXY, as Express's `trust proxy`: whose X-Forwarded-For names the client address (`request.ip`). */
  trustProxy: TrustProxy;
  /** SIGN_IN_ADDRESS_MAX_FAILURES: failed sign-ins of one client address within the window that lock it. */
  signInAddressMaxFailures: number;
  /** SIGN_IN_ADDRESS_WINDOW_SECONDS: the window of the per-address count. */
  signInAddressWindowSeconds: number;
  /** DEVICE_CODE_ADDRESS_MAX: device codes one client address may request within 15 minutes, over every membership (0: no limit). */
  deviceCodeAddressMax: number;
  /** SIGN_IN_DEFENSES=off turns counting and locks off, for the benchmark's side-by-side only; refused in production. */
  signInDefenses: boolean;
  /** OUTBOUND_ALLOW: destinations permitted although the outbound policy refuses their range. */
  outboundAllow: OutboundAllowList;
  /** Most entries of each in-process cache (memberships, user types, roles, webhook lookups). */
  cacheMaxEntries: number;
  /** Origins CORS allows; null: any origin (the specification's default). */
  corsOrigins: string[] | null;
  /** The device approval page named in device code answers; `{membership_id}` is replaced per membership. */
  deviceVerificationUri: string;
  /** Seconds a device waits between polls (RFC 8628 `interval`). */
  devicePollIntervalSeconds: number;
  /** RESET_TOKEN_EXPIRES_IN: lifetime of a password reset token, seconds. */
  resetTokenExpiresIn: number;
  /** RESET_MIN_INTERVAL_SECONDS: another reset request of the same user within it does nothing; 0: no interval. */
  resetMinIntervalSeconds: number;
  /** ACTIVATION_TOKEN_EXPIRES_IN: lifetime of an activation token, seconds. */
  activationTokenExpiresIn: number;
  /** WEBAUTHN_RP_ID: the passkeys' relying party id (a host name, no scheme or port). */
  webauthnRpId: string;
  /** WEBAUTHN_ORIGINS: the origins a passkey ceremony may come from. */
  webauthnOrigins: string[];
  /**
   * PUBLIC_URL: the service's address as browsers and clients reach it, without a trailing slash;
   * each membership's OpenID Provider issuer is `<PUBLIC_URL>/oidc/{m}`. Never taken from a request's Host.
   */
  publicUrl: string;
}

/**
 * Express's `trust proxy` setting: false (the socket's address), true (the left-most
 * X-Forwarded-For entry), a hop count, or the proxies' addresses and CIDRs (or Express's names
 * `loopback`, `linklocal`, `uniquelocal`).
 */
export type TrustProxy = boolean | number | string[];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

/** What Express's proxy-addr accepts as one trusted proxy: an address, or a CIDR (parsed by ipaddr.js, as proxy-addr does). */
function isAddressOrCidr(entry: string): boolean {
  if (!entry.includes('/')) return ipaddr.isValid(entry);
  try {
    ipaddr.parseCIDR(entry);
    return true;
  } catch {
    return false;
  }
}

const TRUST_PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** `TRUST_PROXY`: true/false, a hop count, or comma-separated addresses, CIDRs and Express's range names. */
function trustProxy(env: Env): TrustProxy {
  const raw = env.TRUST_PROXY?.trim();
  if (raw === undefined || raw === '') return false;
  const lower = raw.toLowerCase();
  if (['true', 'yes'].includes(lower)) return true;
  if (['false', 'no'].includes(lower)) return false;
  if (/^\d+$/.test(raw)) return integer(env, 'TRUST_PROXY', 0, 0, 100);
  return raw.split(',').map((part) => {
    const entry = part.trim();
    if (TRUST_PROXY_NAMES.includes(entry) || isAddressOrCidr(entry)) return entry;
    throw new ConfigError('TRUST_PROXY', `must be true, false, a hop count, or comma-separated addresses and CIDRs (or ${TRUST_PROXY_NAMES.join(', ')}), got "${entry}"`);
  });
}

/** `SIGN_IN_DEFENSES`: `on` (the default) or, outside production, `off` (bench/run.mjs compares sign-in with and without them). */
function signInDefenses(env: Env): boolean {
  const value = oneOf(env, 'SIGN_IN_DEFENSES', ['on', 'off'] as const, 'on');
  if (value === 'off' && env.NODE_ENV === 'production') throw new ConfigError('SIGN_IN_DEFENSES', 'may be off only outside production (NODE_ENV=production)');
  return value === 'on';
}

/** Off only on a PostgreSQL server: on the embedded database no other instance could make the calls. */
function webhookDispatch(env: Env, database: DatabaseTarget): boolean {
  const value = oneOf(env, 'WEBHOOK_DISPATCH', ['on', 'off'] as const, 'on');
  if (value === 'off' && database.kind === 'embedded') {
    throw new ConfigError('WEBHOOK_DISPATCH', 'may be off only with DATABASE_URL (a PostgreSQL server another instance dispatches from)');
  }
  return value === 'on';
}

function outboundAllow(env: Env): OutboundAllowList {
  try {
    return parseOutboundAllow(env.OUTBOUND_ALLOW);
  } catch (error) {
    throw new ConfigError('OUTBOUND_ALLOW', `must be comma-separated CIDRs, IP addresses and host names: ${(error as Error).message}`);
  }
}

/**
 * Every statement the service runs is a few milliseconds; a filter on unindexed JSON paths over a
 * large membership is not (one `_query` of the event log measured 118 s of the server's CPU on a
 * million events). The server cancels a statement past this; the embedded database cannot.
 */
const DEFAULT_STATEMENT_TIMEOUT_MS = 2_000;

function databaseTarget(env: Env): DatabaseTarget {
  const url = env.DATABASE_URL;
  const poolSize = integer(env, 'DATABASE_POOL_SIZE', 10, 1, 500);
  const statementTimeoutMs = integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', DEFAULT_STATEMENT_TIMEOUT_MS, 0, 3_600_000);
  if (url === undefined || url === '') {
    return { kind: 'embedded', dataDir: resolve(env.DATA_DIR || './data') };
  }
  if (url === 'memory://') return { kind: 'embedded', dataDir: null };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('DATABASE_URL', 'must be postgres://user@host:port/db or memory://');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new ConfigError('DATABASE_URL', `must use postgres:// or memory://, got "${parsed.protocol}"`);
  }
  return { kind: 'server', url, poolSize, statementTimeoutMs };
}

/** A comma-separated list of origins (`https://app.example`), each exactly an origin; null when unset. */
function originList(env: Env, name: string): string[] | null {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return null;
  return raw.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: URL | null;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = null;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin) {
      throw new ConfigError(name, `must be comma-separated origins such as https://app.example (scheme, host, optional port; no path), got "${origin}"`);
    }
    return origin;
  });
}

/** `CORS_ORIGINS`: the origins CORS allows; null (unset) allows any. */
function corsOrigins(env: Env): string[] | null {
  return originList(env, 'CORS_ORIGINS');
}

/**
 * Never derived from a request's Host header: a forged Host must not send users elsewhere. The
 * default carries the membership (contract), so that the user on a phone types only the user code.
 */
function deviceVerificationUri(env: Env, publicUrlValue: string): string {
  const raw = env.DEVICE_VERIFICATION_URI;
  // The contract's default is `<PUBLIC_URL>/device?...`: the page lives where the service is reached.
  if (raw === undefined || raw === '') return `${publicUrlValue}/device?membership_id={membership_id}`;
  let parsed: URL | null;
  try {
    parsed = new URL(raw.replaceAll('{membership_id}', 'membership'));
  } catch {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new ConfigError('DEVICE_VERIFICATION_URI', `must be an absolute http(s) URL, got "${raw}"`);
  }
  return raw;
}

/**
 * A lease shorter than an attempt could end while the attempt still runs, and another instance
 * would send the same call again: the lease must outlast WEBHOOK_TIMEOUT_MS.
 */
function webhookLeaseSeconds(env: Env, webhookTimeoutMs: number): number {
  const seconds = integer(env, 'WEBHOOK_LEASE_SECONDS', 60, 1, 3600);
  if (seconds * 1000 <= webhookTimeoutMs) {
    throw new ConfigError('WEBHOOK_LEASE_SECONDS', `must be longer than WEBHOOK_TIMEOUT_MS (${webhookTimeoutMs} ms), got ${seconds}`);
  }
  return seconds;
}

/** WEBAUTHN_RP_ID: a bare host name (browsers compare it with the page's host), lower case. */
function webauthnRpId(env: Env): string {
  const raw = env.WEBAUTHN_RP_ID;
  if (raw === undefined || raw === '') return 'localhost';
  if (raw.length > 253 || !/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(raw)) {
    throw new ConfigError('WEBAUTHN_RP_ID', `must be a lower-case host name such as example.com (no scheme, port or path), got "${raw}"`);
  }
  return raw;
}

/** WEBAUTHN_ORIGINS: the origins passkey ceremonies may come from; default the service's own on localhost. */
function webauthnOrigins(env: Env, port: number): string[] {
  return originList(env, 'WEBAUTHN_ORIGINS') ?? [`http://localhost:${port}`];
}

/** PUBLIC_URL: an absolute http(s) origin, optionally with a path prefix; no query, fragment or credentials. */
function publicUrl(env: Env, port: number): string {
  const raw = env.PUBLIC_URL;
  if (raw === undefined || raw === '') return `http://localhost:${port}`;
  let parsed: URL | null;
  try {
    parsed = new URL(raw);
  } catch {
    parsed = null;
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.search || parsed.hash || parsed.username || parsed.password) {
    throw new ConfigError('PUBLIC_URL', `must be an absolute http(s) URL without query, fragment or credentials, got "${raw}"`);
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
}

/** Reads and validates the environment once, at start. A bad value stops the start. */
export function loadConfig(env: Env = process.env): AppConfig {
  const setupToken = env.SETUP_TOKEN || null;
  if (setupToken !== null && setupToken.length < 32) {
    throw new ConfigError('SETUP_TOKEN', 'must be at least 32 characters long');
  }
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const webhookTimeoutMs = integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000);
  const database = databaseTarget(env);
  return {
    port,
    host: env.HOST || '0.0.0.0',
    database,
    nodeEnv: oneOf(env, 'NODE_ENV', ['development', 'production', 'test'] as const, 'development'),
    setupToken,
    logLevel: oneOf(env, 'LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const, 'info'),
    webhookTimeoutMs,
    webhookLeaseSeconds: webhookLeaseSeconds(env, webhookTimeoutMs),
    webhookRetryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 1000, 10, 60_000),
    webhookDeliveryRetentionDays: integer(env, 'WEBHOOK_DELIVERY_RETENTION_DAYS', 7, 1, 365),
    webhookQueueCapacity: integer(env, 'WEBHOOK_QUEUE_CAPACITY', 10_000, 1, 1_000_000),
    webhookDispatch: webhookDispatch(env, database),
    webhookClaimIntervalMs: integer(env, 'WEBHOOK_CLAIM_INTERVAL_MS', 1000, 100, 600_000),
    eventStreamsPerMembership: integer(env, 'EVENT_STREAMS_PER_MEMBERSHIP', 100, 1, 100_000),
    providerTimeoutMs: integer(env, 'PROVIDER_TIMEOUT_MS', 10_000, 100, 120_000),
    providerCacheTtlSeconds: integer(env, 'PROVIDER_CACHE_TTL_SECONDS', 300, 1, 3600),
    providerMetadataTtlSeconds: integer(env, 'PROVIDER_METADATA_TTL_SECONDS', 3600, 60, 86_400),
    mailTimeoutMs: integer(env, 'MAIL_TIMEOUT_MS', 10_000, 100, 120_000),
    mailTryCount: integer(env, 'MAIL_TRY_COUNT', 3, 1, 5),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    shutdownDrainMs: integer(env, 'SHUTDOWN_DRAIN_MS', 30_000, 0, 300_000),
    sweepIntervalMs: integer(env, 'SWEEP_INTERVAL_MS', 60_000, 100, 86_400_000),
    sweepGraceSeconds: integer(env, 'SWEEP_GRACE_SECONDS', 300, 0, 86_400),
    trustProxy: trustProxy(env),
    signInAddressMaxFailures: integer(env, 'SIGN_IN_ADDRESS_MAX_FAILURES', 200, 1, 1_000_000),
    signInAddressWindowSeconds: integer(env, 'SIGN_IN_ADDRESS_WINDOW_SECONDS', 900, 60, 86_400),
    deviceCodeAddressMax: integer(env, 'DEVICE_CODE_ADDRESS_MAX', 100, 0, 1_000_000),
    signInDefenses: signInDefenses(env),
    outboundAllow: outboundAllow(env),
    cacheMaxEntries: integer(env, 'CACHE_MAX_ENTRIES', 10_000, 1, 10_000_000),
    corsOrigins: corsOrigins(env),
    deviceVerificationUri: deviceVerificationUri(env, publicUrl(env, port)),
    devicePollIntervalSeconds: integer(env, 'DEVICE_POLL_INTERVAL_SECONDS', 5, 1, 60),
    resetTokenExpiresIn: integer(env, 'RESET_TOKEN_EXPIRES_IN', 3600, 60, 86_400),
    resetMinIntervalSeconds: integer(env, 'RESET_MIN_INTERVAL_SECONDS', 60, 0, 3600),
    activationTokenExpiresIn: integer(env, 'ACTIVATION_TOKEN_EXPIRES_IN', 259_200, 3600, 2_592_000),
    webauthnRpId: webauthnRpId(env),
    webauthnOrigins: webauthnOrigins(env, port),
    publicUrl: publicUrl(env, port),
  };
}

export const APP_CONFIG = Symbol('APP_CONFIG');
