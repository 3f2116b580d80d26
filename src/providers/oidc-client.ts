import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy, Optional } from '@nestjs/common';
import { createRemoteJWKSet, customFetch, errors as joseErrors, type JWTPayload, jwtVerify } from 'jose';
import type { Logger } from 'pino';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { BoundedCache } from '../common/bounded-cache';
import { DomainError } from '../common/errors';
import { LOGGER } from '../common/logger';
import { OutboundHttp } from '../outbound/outbound.module';
import type { OutboundRequest, OutboundResult } from '../outbound/outbound-http';
import { OUTGOING_CALL_OBSERVER, type OutgoingCallObserver } from '../outbound/outgoing-calls';

/** Asymmetric algorithms only: an HS* token would be signed with the client secret, which is no proof of the provider. */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** Clock skew allowed on exp, nbf and iat (contract). */
const CLOCK_TOLERANCE_SECONDS = 60;
/** An unknown `kid` refetches the key set at most this often (contract). */
const JWKS_COOLDOWN_MS = 30_000;
/** Discovery documents and key sets are small; more is cut and then fails to parse. */
const BODY_LIMIT_BYTES = 512 * 1024;

/** The parts of a discovery document sign-in uses. */
export interface ProviderMetadata {
  issuer: string;
  jwksUri: string;
  tokenEndpoint: string | undefined;
  tokenEndpointAuthMethods: string[];
}

/** What a provider is for verification: its issuer and the client the tokens must be for. */
export interface ProviderClient {
  issuer: string;
  clientId: string;
}

export interface CodeClient {
  clientId: string;
  clientSecret: string;
}

export interface CodeGrant {
  code: string;
  redirectUri: string;
  codeVerifier: string | undefined;
}

/** The provider could not be used (unreachable, slow, broken answer): 502 ProviderUnavailable. */
class ProviderCallFailed extends Error {}

const unavailable = (): DomainError => new DomainError('ProviderUnavailable', 'The identity provider could not be reached or gave an unusable answer');
/** The claims a sign-in stores (the link, the user's fields): "Hostile input" text rules apply to them. */
const STORED_CLAIMS = ['sub', 'email', 'given_name', 'family_name'] as const;
/** OpenID Connect Core 2: `sub` is at most 255 ASCII characters; the other stored claims are clipped or checked later. */
const MAX_STORED_CLAIM_LENGTH = 1024;
/** Control characters (NUL included) and lone surrogates, which no text column takes. */
const UNSTORABLE_CHARACTER = /[\p{Cc}\p{Cs}]/u;

function isStorableClaim(value: unknown): boolean {
  return typeof value !== 'string' || (value.length <= MAX_STORED_CLAIM_LENGTH && !UNSTORABLE_CHARACTER.test(value));
}

const invalidToken = (): DomainError => new DomainError('ProviderTokenInvalid', 'The identity provider token is not valid');

function describe(result: OutboundResult): string {
  switch (result.kind) {
    case 'answered':
      return `answered ${result.status}`;
    case 'blocked':
    case 'failed':
      return result.error;
    default:
      return result.kind;
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** `nonce` in the body and the token and equal (compared in constant time), or in neither. */
function nonceMatches(expected: string | undefined, claim: unknown): boolean {
  if (expected === undefined) return claim === undefined;
  return typeof claim === 'string' && timingSafeEqual(digest(expected), digest(claim));
}

/**
 * OpenID Connect for sign-in: discovery, the key set and the token endpoint, every call through
 * the outbound module (its destination policy, no redirects), and the id token checks of the
 * contract with `jose`. Discovery documents and key sets are kept (bounded) per issuer / key set URL for
 * PROVIDER_METADATA_TTL_SECONDS.
 */
@Injectable()
export class OidcClient implements OnModuleDestroy {
  /** Bounded like every in-process cache (CACHE_MAX_ENTRIES); entries live PROVIDER_METADATA_TTL_SECONDS. */
  private readonly discoveries: BoundedCache<ProviderMetadata>;
  private readonly keySets: BoundedCache<ReturnType<typeof createRemoteJWKSet>>;

  constructor(
    private readonly outbound: OutboundHttp,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() @Inject(OUTGOING_CALL_OBSERVER) private readonly observer?: OutgoingCallObserver,
  ) {
    const options = { maxEntries: config.cacheMaxEntries, ttlMs: config.providerMetadataTtlSeconds * 1000 };
    this.discoveries = new BoundedCache(options);
    this.keySets = new BoundedCache(options);
  }

  onModuleDestroy(): void {
    this.discoveries.close();
    this.keySets.close();
  }

  /** One call through the outbound module, counted as `kind="provider"` when it was actually sent. */
  private async send(call: Omit<OutboundRequest, 'timeoutMs' | 'bodyLimitBytes'>): Promise<OutboundResult> {
    const result = await this.outbound.send({ ...call, timeoutMs: this.config.providerTimeoutMs, bodyLimitBytes: BODY_LIMIT_BYTES });
    if (result.kind === 'blocked' || result.kind === 'cancelled') return result;
    try {
      this.observer?.observe({
        kind: 'provider',
        outcome: result.kind === 'timeout' ? 'timeout' : result.kind === 'answered' && result.status >= 200 && result.status < 300 ? 'success' : 'failure',
        durationSeconds: result.durationSeconds,
        ...(result.kind === 'answered' ? { status: result.status } : {}),
      });
    } catch {
      // Metrics must never break a sign-in.
    }
    return result;
  }

  private get metadataTtlMs(): number {
    return this.config.providerMetadataTtlSeconds * 1000;
  }

  /** One GET that must answer 200 with JSON; anything else is the provider's failure. */
  private async getJson(url: string): Promise<unknown> {
    const result = await this.send({ url, method: 'GET', headers: { accept: 'application/json' } });
    if (result.kind !== 'answered' || result.status !== 200) throw new ProviderCallFailed(`GET ${new URL(url).origin}: ${describe(result)}`);
    try {
      return JSON.parse(result.body) as unknown;
    } catch {
      throw new ProviderCallFailed(`GET ${new URL(url).origin}: not JSON`);
    }
  }

  async metadata(issuer: string): Promise<ProviderMetadata> {
    const cached = this.discoveries.get(issuer);
    if (cached) return cached;
    const document = await this.getJson(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`);
    if (typeof document !== 'object' || document === null) throw new ProviderCallFailed('discovery: not an object');
    const fields = document as Record<string, unknown>;
    if (fields.issuer !== issuer) throw new ProviderCallFailed('discovery: issuer differs from the configured one');
    if (typeof fields.jwks_uri !== 'string' || !URL.canParse(fields.jwks_uri)) throw new ProviderCallFailed('discovery: no jwks_uri');
    const tokenEndpoint = typeof fields.token_endpoint === 'string' && URL.canParse(fields.token_endpoint) ? fields.token_endpoint : undefined;
    const methods = Array.isArray(fields.token_endpoint_auth_methods_supported)
      ? fields.token_endpoint_auth_methods_supported.filter((method): method is string => typeof method === 'string')
      : [];
    const metadata: ProviderMetadata = { issuer, jwksUri: fields.jwks_uri, tokenEndpoint, tokenEndpointAuthMethods: methods };
    this.discoveries.set(issuer, metadata);
    return metadata;
  }

  /** jose's remote key set, fetching through the outbound module; an unknown kid refetches at most once per 30 s. */
  private keySet(jwksUri: string): ReturnType<typeof createRemoteJWKSet> {
    const cached = this.keySets.get(jwksUri);
    if (cached) return cached;
    const keys = createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: this.config.providerTimeoutMs,
      cooldownDuration: JWKS_COOLDOWN_MS,
      cacheMaxAge: this.metadataTtlMs,
      [customFetch]: async (url: string) => new Response(JSON.stringify(await this.getJson(url)), { status: 200 }),
    });
    this.keySets.set(jwksUri, keys);
    return keys;
  }

  /**
   * Exchanges an authorization code at the discovery token endpoint and answers the id token it
   * returned. The provider's access and refresh tokens in the same answer are dropped here, unread.
   */
  async exchangeCode(issuer: string, client: CodeClient, grant: CodeGrant): Promise<string> {
    try {
      const metadata = await this.metadata(issuer);
      if (!metadata.tokenEndpoint) throw new ProviderCallFailed('discovery: no token_endpoint');
      const form = new URLSearchParams({ grant_type: 'authorization_code', code: grant.code, redirect_uri: grant.redirectUri });
      if (grant.codeVerifier !== undefined) form.set('code_verifier', grant.codeVerifier);
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
      const methods = metadata.tokenEndpointAuthMethods;
      // client_secret_basic is the default when discovery names none (OpenID Connect Discovery 1.0).
      if (methods.length > 0 && !methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
        form.set('client_id', client.clientId);
        form.set('client_secret', client.clientSecret);
      } else {
        const encode = (value: string): string => encodeURIComponent(value);
        headers.authorization = `Basic ${Buffer.from(`${encode(client.clientId)}:${encode(client.clientSecret)}`).toString('base64')}`;
      }
      const result = await this.send({ url: metadata.tokenEndpoint, method: 'POST', headers, body: form.toString() });
      if (result.kind === 'answered' && result.status >= 400 && result.status < 500) {
        this.logger.debug({ reason: `token endpoint answered ${result.status}` }, 'identity provider token refused');
        throw invalidToken();
      }
      if (result.kind !== 'answered' || result.status !== 200) throw new ProviderCallFailed(`token endpoint: ${describe(result)}`);
      let answer: unknown;
      try {
        answer = JSON.parse(result.body);
      } catch {
        throw new ProviderCallFailed('token endpoint: not JSON');
      }
      const idToken = typeof answer === 'object' && answer !== null ? (answer as Record<string, unknown>).id_token : undefined;
      if (typeof idToken !== 'string') throw new ProviderCallFailed('token endpoint: no id_token');
      return idToken;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /**
   * The verified claims of an id token for this client, or 401 ProviderTokenInvalid (the reason at
   * debug, never the token); 502 ProviderUnavailable when discovery or the keys cannot be had.
   */
  async verifyIdToken(provider: ProviderClient, idToken: string, nonce: string | undefined): Promise<JWTPayload & { sub: string }> {
    try {
      const metadata = await this.metadata(provider.issuer);
      const { payload } = await jwtVerify(idToken, this.keySet(metadata.jwksUri), {
        issuer: provider.issuer,
        audience: provider.clientId,
        algorithms: ID_TOKEN_ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp', 'iat'],
      });
      if (typeof payload.sub !== 'string' || payload.sub === '') throw new joseErrors.JWTClaimValidationFailed('sub missing', payload, 'sub');
      if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== provider.clientId) {
        throw new joseErrors.JWTClaimValidationFailed('azp differs from the client id', payload, 'azp');
      }
      if (!nonceMatches(nonce, payload.nonce)) throw new joseErrors.JWTClaimValidationFailed('nonce mismatch', payload, 'nonce');
      // jose checks iat's future only with maxTokenAge; a token "issued" ahead of time is refused here.
      if (typeof payload.iat === 'number' && payload.iat > Math.floor(Date.now() / 1000) + CLOCK_TOLERANCE_SECONDS) {
        throw new joseErrors.JWTClaimValidationFailed('iat in the future', payload, 'iat');
      }
      const unusable = STORED_CLAIMS.find((claim) => !isStorableClaim(payload[claim]));
      if (unusable !== undefined) throw new joseErrors.JWTClaimValidationFailed(`${unusable} holds characters that cannot be stored`, payload, unusable);
      return payload as JWTPayload & { sub: string };
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** The domain error for a failure: the provider's (502) or the token's (401); the reason goes to the debug log. */
  failure(error: unknown): DomainError {
    if (error instanceof DomainError) return error;
    if (error instanceof ProviderCallFailed || error instanceof joseErrors.JWKSTimeout || error instanceof joseErrors.JWKSInvalid) {
      this.logger.debug({ reason: error.message }, 'identity provider unavailable');
      return unavailable();
    }
    const code = error instanceof joseErrors.JOSEError ? error.code : 'unexpected';
    this.logger.debug({ reason: code, detail: error instanceof Error ? error.message : undefined }, 'identity provider token refused');
    return invalidToken();
  }
}
