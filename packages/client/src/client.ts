import { hash } from 'node:crypto';
import { DEFAULT_MAX_CACHE_ENTRIES, LookupTable, TtlCache } from './cache';
import {
  accessDenied,
  type AuthorizationDenied,
  type ChallengeScheme,
  inDevelopment,
  serviceUnavailable,
  unauthorized,
} from './errors';
import {
  buildExpression,
  CompiledPermission,
  compilePermission,
  type PermissionTemplate,
} from './expression';
import { type PortcullisSettings, type ResolvedSettings, resolveSettings } from './settings';
import { StreamFollower } from './event-stream';
import { dropsEveryAnswer, FOLLOWED_EVENT_TYPES, StreamCache, tokenExpiry } from './stream-cache';
import { type ServiceAnswer, ServiceTransport } from './transport';

export type TokenKind = 'Bearer' | 'Basic';

/**
 * The verified caller as `/whoami` returns it: a user (Bearer: `username`, `role`, ...) or an
 * application (Basic: `name`, `role`, ...). Only `_id` and `membership_id` are checked.
 */
export interface PortcullisIdentity {
  _id: string;
  membership_id: string;
  role?: string;
  /** Users. */
  username?: string;
  /** Applications. */
  name?: string;
  [field: string]: unknown;
}

/** What an allowed request carries (`request.portcullis` in both adapters). */
export interface PortcullisPrincipal {
  identity: PortcullisIdentity;
  tokenKind: TokenKind;
  /** The normalized expression the service allowed; authorized mode only. */
  permission?: string;
}

export type EndpointMode = 'authorized' | 'self-authorized' | 'unauthorized';

/** How an endpoint is protected. */
export type EndpointRule =
  | {
      mode: 'authorized';
      /** Absent segments take their defaults (subject: caller id, resource: route, action/object: `*`). */
      permission?: PermissionTemplate | CompiledPermission;
    }
  | { mode: 'self-authorized' }
  | { mode: 'unauthorized' };

/** The parts of an incoming request the library reads. */
export interface ProtectedRequest {
  /** The `Authorization` header as received; forwarded to the service unchanged. */
  authorization?: string | undefined;
  /** Route template, e.g. `/orders/:orderId` (default resource; see README). */
  routeTemplate?: string | undefined;
  params?: Readonly<Record<string, unknown>> | undefined;
  query?: Readonly<Record<string, unknown>> | undefined;
  headers?: Readonly<Record<string, string | readonly string[] | undefined>> | undefined;
}

export interface AuthorizationAllowed {
  allowed: true;
  /** `null` for an unauthorized (public) endpoint. */
  principal: PortcullisPrincipal | null;
}

export type AuthorizationOutcome = AuthorizationAllowed | AuthorizationDenied;

interface PermissionAnswer {
  allowed: boolean;
  permission: string;
}

interface Credentials {
  scheme: ChallengeScheme;
  header: string;
  /** SHA-256 of the header: the key of caches and in-flight lookups, never the secret itself. */
  digest: string;
}

type Step<T> = { ok: true; value: T } | { ok: false; failure: AuthorizationDenied };

/** Longest Authorization header considered; longer ones are refused without a call. */
export const MAX_AUTHORIZATION_LENGTH = 8192;
const AUTHORIZATION_SYNTAX = /^([A-Za-z]+) +([\x21-\x7E]+)$/;

/**
 * The client of the identity service: validates its settings at construction, then decides for
 * each request whether it may pass ({@link authorize}). Both adapters (Nest guard, Express
 * middleware) are thin shells around it.
 */
export class PortcullisClient {
  readonly settings: Readonly<ResolvedSettings>;
  private readonly transport: ServiceTransport;
  private readonly identities: LookupTable<PortcullisIdentity, AuthorizationDenied>;
  private readonly permissions: LookupTable<PermissionAnswer, AuthorizationDenied>;
  /** With CacheTTL: answers kept while the event stream is connected, and the stream itself. */
  private readonly liveIdentities: StreamCache<PortcullisIdentity> | undefined;
  private readonly livePermissions: StreamCache<PermissionAnswer> | undefined;
  private readonly follower: StreamFollower | undefined;
  private following = false;

  constructor(settings: PortcullisSettings) {
    this.settings = Object.freeze(resolveSettings(settings));
    this.transport = new ServiceTransport(this.settings.timeoutMs);
    const ttl = this.settings.basicTokenCacheTtlMs;
    this.identities = new LookupTable(
      ttl > 0 ? new TtlCache<PortcullisIdentity>(ttl, DEFAULT_MAX_CACHE_ENTRIES) : undefined,
    );
    this.permissions = new LookupTable(
      ttl > 0 ? new TtlCache<PermissionAnswer>(ttl, DEFAULT_MAX_CACHE_ENTRIES) : undefined,
    );
    const { cacheTtlMs, streamAuthorization } = this.settings;
    if (cacheTtlMs > 0 && streamAuthorization !== undefined) {
      const identities = new StreamCache<PortcullisIdentity>(cacheTtlMs, DEFAULT_MAX_CACHE_ENTRIES);
      const permissions = new StreamCache<PermissionAnswer>(cacheTtlMs, DEFAULT_MAX_CACHE_ENTRIES);
      const url = this.url(`memberships/${encodeURIComponent(this.settings.membershipId)}/events/stream`);
      url.searchParams.set('types', FOLLOWED_EVENT_TYPES.join(','));
      // The Basic answers BasicTokenCacheTTL keeps follow the stream as well: without it a rotated
      // secret works that long (specification); with it, a protected API learns within a second.
      const clearBasic = (): void => {
        this.identities.clearCache();
        this.permissions.clearCache();
      };
      const clear = (): void => {
        identities.clear();
        permissions.clear();
        clearBasic();
      };
      this.follower = new StreamFollower({
        url,
        authorization: streamAuthorization,
        connectTimeoutMs: this.settings.timeoutMs,
        // Events that came while nothing followed are unknown: start from empty on each connect and loss.
        onConnected: clear,
        onDisconnected: clear,
        onEvent: (event) => {
          identities.apply(event);
          permissions.apply(event);
          if (dropsEveryAnswer(event.event)) clearBasic();
        },
      });
      this.liveIdentities = identities;
      this.livePermissions = permissions;
    }
  }

  /**
   * Whether answers are served from the cache now (CacheTTL set and the event stream
   * connected). While it is false every request asks the service.
   */
  get streamConnected(): boolean {
    return this.follower?.connected ?? false;
  }

  /** Decides whether a request may reach an endpoint. Never rejects for service failures. */
  async authorize(request: ProtectedRequest, rule: EndpointRule): Promise<AuthorizationOutcome> {
    return this.decide(request, rule);
  }

  /**
   * {@link authorize}'s decision, given at once when it needs no call to the service (a public
   * endpoint, a refused header, or answers the cache holds), a promise otherwise. The adapters
   * let a request the cache answers through without a promise: on a cached route the promises
   * and microtask turns of the asynchronous path were most of what the guard cost.
   */
  decide(request: ProtectedRequest, rule: EndpointRule): AuthorizationOutcome | Promise<AuthorizationOutcome> {
    if (rule.mode === 'unauthorized') return PUBLIC_ENDPOINT;
    if (this.follower && !this.following) {
      // The stream opens with the first protected request, so that building a client calls nothing.
      this.following = true;
      this.follower.start();
    }

    const credentials = parseAuthorization(request.authorization);
    if (!credentials.ok) return credentials.failure;
    return andThen(this.identify(credentials.value), (identified) => this.decideForIdentity(identified, credentials.value, request, rule));
  }

  private decideForIdentity(
    identified: Step<PortcullisIdentity>,
    credentials: Credentials,
    request: ProtectedRequest,
    rule: Exclude<EndpointRule, { mode: 'unauthorized' }>,
  ): AuthorizationOutcome | Promise<AuthorizationOutcome> {
    if (!identified.ok) return identified.failure;
    const identity = identified.value;
    const { scheme } = credentials;
    if (identity.membership_id !== this.settings.membershipId) {
      return unauthorized(
        { errorCode: 'InvalidToken', message: 'The token does not belong to the membership of this API.' },
        scheme,
        true,
        `identity ${identity._id} is in membership ${identity.membership_id}`,
      );
    }
    if (rule.mode === 'self-authorized') {
      return { allowed: true, principal: { identity, tokenKind: scheme } };
    }

    const permission = rule.permission instanceof CompiledPermission
      ? rule.permission
      : compilePermission(rule.permission);
    const built = buildExpression(permission, {
      callerId: identity._id,
      routeTemplate: request.routeTemplate,
      params: request.params,
      query: request.query,
      headers: request.headers,
      env: process.env,
    });
    if (!built.ok) return accessDenied(built.message, built.detail);

    return andThen(this.checkPermission(credentials, built.expression, identity._id), (checked): AuthorizationOutcome => {
      if (!checked.ok) return checked.failure;
      if (!checked.value.allowed) {
        const required = checked.value.permission;
        const hint = inDevelopment() ? ` Needed: ${required} (NODE_ENV=development shows this).` : '';
        return {
          ...accessDenied(`Access denied: the caller lacks the permission this endpoint requires.${hint}`, `not allowed: ${required}`),
          required,
        };
      }
      return {
        allowed: true,
        principal: { identity, tokenKind: scheme, permission: checked.value.permission },
      };
    });
  }

  /** Closes kept-alive connections to the service and the event stream (call on shutdown). */
  close(): void {
    this.follower?.stop();
    this.following = false;
    this.transport.close();
  }

  private identify(credentials: Credentials): Step<PortcullisIdentity> | Promise<Step<PortcullisIdentity>> {
    const key = credentials.digest;
    return this.throughLiveCache(this.liveIdentities, key, credentials, (identity) => identity._id, (generation) =>
      this.identities.run(key, credentials.scheme === 'Basic', async () => {
        const answer = await this.transport.get(this.url('whoami'), credentials.header);
        return readIdentity(answer, credentials.scheme);
      }, generation),
    );
  }

  private checkPermission(credentials: Credentials, expression: string, callerId: string): Step<PermissionAnswer> | Promise<Step<PermissionAnswer>> {
    // The expression is the rest of the key: a space never occurs in a digest, so no two pairs meet.
    const key = `${credentials.digest} ${expression}`;
    return this.throughLiveCache(this.livePermissions, key, credentials, () => callerId, (generation) =>
      this.permissions.run(key, credentials.scheme === 'Basic', async () => {
        const answer = await this.transport.get(this.url(`roles/check-permission?permission=${encodeURIComponent(expression)}`), credentials.header);
        return readPermission(answer, credentials.scheme, expression);
      }, generation),
    );
  }

  /**
   * With CacheTTL and the stream connected: the kept answer, or the service's, kept if nothing
   * was dropped since its call started (an event that came meanwhile may postdate it). `ask`
   * shares a call only with requests of the same cache generation, so the generation read here is
   * the one the call started in, also for a request that joined it. Without the stream: the
   * service's answer, and nothing kept. A kept answer comes at once, not as a promise.
   */
  private throughLiveCache<T>(
    cache: StreamCache<T> | undefined,
    key: string,
    credentials: Credentials,
    subjectOf: (value: T) => string,
    ask: (generation: number) => Step<T> | Promise<Step<T>>,
  ): Step<T> | Promise<Step<T>> {
    if (cache === undefined) return ask(0);
    const generation = cache.generation;
    if (!this.streamConnected) return ask(generation);
    const hit = cache.get(key);
    if (hit !== undefined) return { ok: true, value: hit };
    return andThen(ask(generation), (result) => {
      if (result.ok && this.streamConnected) {
        // A Basic credential has no exp: its rotation or deletion comes as an Application* event.
        const expiresAt = credentials.scheme === 'Basic' ? Number.POSITIVE_INFINITY : tokenExpiry(credentials.header);
        cache.set(key, result.value, subjectOf(result.value), generation, expiresAt);
      }
      return result;
    });
  }

  private url(path: string): URL {
    // The base path ends with "/", so a relative path keeps the prefix.
    return new URL(path, this.settings.baseUrl);
  }
}

/** The outcome of every public endpoint. */
const PUBLIC_ENDPOINT: AuthorizationAllowed = Object.freeze({ allowed: true, principal: null });

/** `next` applied to `value`: at once when it is at hand, once it resolves when it is a promise. */
function andThen<T, R>(value: T | Promise<T>, next: (value: T) => R | Promise<R>): R | Promise<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}

function parseAuthorization(header: string | undefined): Step<Credentials> {
  if (header === undefined || header.trim() === '') {
    return {
      ok: false,
      failure: unauthorized(
        {
          errorCode: 'InvalidToken',
          message: 'The Authorization header is missing: send Bearer <access token> or Basic <application id>:<secret>.',
        },
        'Bearer',
        false,
      ),
    };
  }
  const match = header.length <= MAX_AUTHORIZATION_LENGTH ? AUTHORIZATION_SYNTAX.exec(header) : null;
  if (match === null) {
    return {
      ok: false,
      failure: unauthorized(
        { errorCode: 'InvalidToken', message: 'The Authorization header is malformed.' },
        'Bearer',
        true,
      ),
    };
  }
  const schemeText = (match[1] ?? '').toLowerCase();
  const scheme: ChallengeScheme | undefined =
    schemeText === 'bearer' ? 'Bearer' : schemeText === 'basic' ? 'Basic' : undefined;
  if (scheme === undefined) {
    return {
      ok: false,
      failure: unauthorized(
        {
          errorCode: 'InvalidToken',
          message: `The authorization scheme "${match[1] ?? ''}" is not supported: use Bearer or Basic.`,
        },
        'Bearer',
        false,
      ),
    };
  }
  return {
    ok: true,
    // One-shot hash: half the cost of createHash().update().digest() on every protected request.
    value: { scheme, header, digest: hash('sha256', header, 'base64url') },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A 401 of the service, passed on with the service's own code and message. */
function serviceRejection(answer: ServiceAnswer, scheme: ChallengeScheme): AuthorizationDenied | undefined {
  if (answer.kind !== 'answer' || answer.status !== 401 || !isRecord(answer.json)) return undefined;
  const { errorCode, message } = answer.json;
  if (typeof errorCode !== 'string' || errorCode === '' || typeof message !== 'string') return undefined;
  return unauthorized({ errorCode, message }, scheme, true, `service answered 401 ${errorCode}`);
}

/** Anything that is not a usable answer: never a 401, since the token was not judged. */
function unusable(answer: ServiceAnswer, what: string): AuthorizationDenied {
  if (answer.kind === 'failure') return serviceUnavailable(answer.detail);
  return serviceUnavailable(
    answer.status === 200 || answer.status === 401
      ? `${what}: unreadable ${answer.status} answer`
      : `${what}: service answered ${answer.status}`,
  );
}

function readIdentity(answer: ServiceAnswer, scheme: ChallengeScheme): Step<PortcullisIdentity> {
  if (answer.kind === 'answer' && answer.status === 200 && isRecord(answer.json)) {
    const body = answer.json;
    const id = body['_id'];
    const membershipId = body['membership_id'];
    if (typeof id === 'string' && id !== '' && typeof membershipId === 'string') {
      return { ok: true, value: { ...body, _id: id, membership_id: membershipId } };
    }
  }
  const rejected = serviceRejection(answer, scheme);
  return { ok: false, failure: rejected ?? unusable(answer, '/whoami') };
}

function readPermission(
  answer: ServiceAnswer,
  scheme: ChallengeScheme,
  expression: string,
): Step<PermissionAnswer> {
  if (answer.kind === 'answer' && answer.status === 200 && isRecord(answer.json)) {
    const { allowed, permission } = answer.json;
    if (typeof allowed === 'boolean') {
      return {
        ok: true,
        value: { allowed, permission: typeof permission === 'string' ? permission : expression },
      };
    }
  }
  if (answer.kind === 'answer' && answer.status === 400 && isRecord(answer.json) &&
      (answer.json['errorCode'] === 'InvalidPermission' || answer.json['errorCode'] === 'PermissionRequired')) {
    // The service would not evaluate the expression: the endpoint cannot be granted.
    return {
      ok: false,
      failure: accessDenied(
        'Access denied: the caller lacks the permission this endpoint requires.',
        `service refused the expression ${expression} as ${String(answer.json['errorCode'])}`,
      ),
    };
  }
  const rejected = serviceRejection(answer, scheme);
  return { ok: false, failure: rejected ?? unusable(answer, '/roles/check-permission') };
}
