import { PortcullisConfigError } from './errors';

/** Settings of a protected API, named as in the specification. */
export interface PortcullisSettings {
  /** Absolute http(s) URL of the service, including any path prefix (`https://id.example/auth/`). */
  BaseUrl: string;
  /** Membership of the protected application; identities of any other membership are refused. */
  MembershipId: string;
  /**
   * Seconds during which a verified Basic token (and each permission answer for it) is cached.
   * 0 or absent: no cache. A rotated secret keeps working up to this many seconds.
   */
  BasicTokenCacheTTL?: number;
  /** Deadline of one call to the service, connection to last byte, in milliseconds. Default 5000. */
  TimeoutMs?: number;
  /**
   * Seconds during which `/whoami` and permission answers are kept, per token (by digest) and
   * expression, never past the token's `exp`. 0 or absent: no cache. Needs `StreamCredentials`:
   * the library follows the service's event stream and drops what a revocation or change makes
   * stale, and serves nothing from the cache while the stream is not connected.
   */
  CacheTTL?: number;
  /** `<application id>:<secret>` of an application holding `events.read`: the stream's credentials. */
  StreamCredentials?: string;
}

/** Settings after validation, with the defaults applied. */
export interface ResolvedSettings {
  /** Base URL whose path ends with `/`, so relative routes keep the prefix. */
  baseUrl: URL;
  membershipId: string;
  /** 0 when there is no cache. */
  basicTokenCacheTtlMs: number;
  timeoutMs: number;
  /** 0 when there is no stream-following cache. */
  cacheTtlMs: number;
  /** `Basic <id>:<secret>`, when the cache is on. */
  streamAuthorization: string | undefined;
}

export const DEFAULT_TIMEOUT_MS = 5000;
/** Largest delay `setTimeout` accepts. */
const MAX_TIMEOUT_MS = 2_147_483_647;
const KNOWN_KEYS = new Set(['BaseUrl', 'MembershipId', 'BasicTokenCacheTTL', 'TimeoutMs', 'CacheTTL', 'StreamCredentials']);

function fail(message: string): never {
  throw new PortcullisConfigError(`Invalid Portcullis settings: ${message}`);
}

/** Validates the settings; throws a {@link PortcullisConfigError} naming the first bad setting. */
export function resolveSettings(settings: PortcullisSettings): ResolvedSettings {
  if (typeof settings !== 'object' || settings === null) fail('settings must be an object.');
  for (const key of Object.keys(settings)) {
    if (!KNOWN_KEYS.has(key)) {
      fail(`unknown setting "${key}" (known: ${[...KNOWN_KEYS].join(', ')}).`);
    }
  }
  return {
    baseUrl: resolveBaseUrl(settings.BaseUrl),
    membershipId: resolveMembershipId(settings.MembershipId),
    basicTokenCacheTtlMs: resolveTtl(settings.BasicTokenCacheTTL, 'BasicTokenCacheTTL'),
    timeoutMs: resolveTimeout(settings.TimeoutMs),
    ...resolveStreamCache(settings.CacheTTL, settings.StreamCredentials),
  };
}

/** A cache without the stream could not see revocations: CacheTTL needs StreamCredentials. */
function resolveStreamCache(ttl: unknown, credentials: unknown): Pick<ResolvedSettings, 'cacheTtlMs' | 'streamAuthorization'> {
  const cacheTtlMs = resolveTtl(ttl, 'CacheTTL');
  if (credentials !== undefined && (typeof credentials !== 'string' || !/^[\x21-\x39\x3B-\x7E]+:[\x21-\x7E]+$/.test(credentials))) {
    fail('StreamCredentials must be "<application id>:<secret>" of an application holding events.read.');
  }
  if (cacheTtlMs === 0) return { cacheTtlMs, streamAuthorization: undefined };
  if (credentials === undefined) {
    fail('CacheTTL needs StreamCredentials: without the event stream a cached answer would outlive a revocation.');
  }
  return { cacheTtlMs, streamAuthorization: `Basic ${credentials}` };
}

function resolveBaseUrl(value: unknown): URL {
  if (typeof value !== 'string' || value.trim() === '') {
    fail('BaseUrl is required: the absolute http or https URL of the service.');
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(`BaseUrl "${value}" is not an absolute URL (expected for example https://id.example.com/).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail(`BaseUrl must use http or https, not "${url.protocol.replace(/:$/, '')}".`);
  }
  if (url.username !== '' || url.password !== '') {
    fail('BaseUrl must not carry credentials; the caller\'s Authorization header is forwarded.');
  }
  if (url.search !== '' || url.hash !== '') {
    fail('BaseUrl must not carry a query string or a fragment.');
  }
  if (!url.pathname.endsWith('/')) url.pathname = `${url.pathname}/`;
  return url;
}

function resolveMembershipId(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    fail('MembershipId is required: the membership of the protected application.');
  }
  if (value !== value.trim()) fail('MembershipId must not start or end with whitespace.');
  return value;
}

function resolveTtl(value: unknown, name: string): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    fail(`${name} must be a finite number of seconds >= 0 (0 or absent: no cache).`);
  }
  return value * 1000;
}

function resolveTimeout(value: unknown): number {
  if (value === undefined) return DEFAULT_TIMEOUT_MS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMEOUT_MS) {
    fail(`TimeoutMs must be a number of milliseconds > 0 and <= ${MAX_TIMEOUT_MS}.`);
  }
  return value;
}
