import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { OIDC_GRANT_TYPES } from '../applications/application-oidc';

/** The scopes a client may ask (contract: `scopes_supported`). */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'offline_access'] as const;
export type OidcScope = (typeof OIDC_SCOPES)[number];

/** The claims ID tokens and userinfo may carry, by the scope that releases them (OpenID Connect Core 5.4). */
export const SCOPE_CLAIMS: Readonly<Record<'profile' | 'email', readonly string[]>> = {
  profile: ['name', 'given_name', 'family_name', 'preferred_username'],
  email: ['email', 'email_verified'],
};

/** OpenID Connect Discovery 1.0's provider metadata, as this service answers it. */
export interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint: string;
  jwks_uri: string;
  end_session_endpoint: string;
  introspection_endpoint: string;
  revocation_endpoint: string;
  device_authorization_endpoint: string;
  response_types_supported: string[];
  response_modes_supported: string[];
  grant_types_supported: string[];
  subject_types_supported: string[];
  id_token_signing_alg_values_supported: string[];
  code_challenge_methods_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  introspection_endpoint_auth_methods_supported: string[];
  revocation_endpoint_auth_methods_supported: string[];
  scopes_supported: string[];
  claims_supported: string[];
  prompt_values_supported: string[];
  authorization_response_iss_parameter_supported: boolean;
  claims_parameter_supported: boolean;
  request_parameter_supported: boolean;
  request_uri_parameter_supported: boolean;
}

const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'];

/**
 * Each membership's issuer, `<PUBLIC_URL>/oidc/{m}` (contract "Single sign-on"): the one place an
 * OpenID Provider URL is made. Never from a request's Host header, which a client can set.
 */
@Injectable()
export class Issuers {
  private readonly publicUrl: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.publicUrl = config.publicUrl;
  }

  of(membershipId: string): string {
    return `${this.publicUrl}/oidc/${encodeURIComponent(membershipId)}`;
  }

  /** Whether the issuer is served over https (the single sign-on cookie is then Secure). */
  get secure(): boolean {
    return this.publicUrl.startsWith('https:');
  }

  /** The path under which the issuer's cookies live (within the issuer, as the contract asks). */
  cookiePath(membershipId: string): string {
    return new URL(this.of(membershipId)).pathname;
  }

  metadata(membershipId: string): ProviderMetadata {
    const issuer = this.of(membershipId);
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      userinfo_endpoint: `${issuer}/userinfo`,
      jwks_uri: `${issuer}/jwks`,
      end_session_endpoint: `${issuer}/logout`,
      introspection_endpoint: `${issuer}/introspect`,
      revocation_endpoint: `${issuer}/revoke`,
      device_authorization_endpoint: `${issuer}/device/authorize`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: [...OIDC_GRANT_TYPES],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
      introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
      revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
      scopes_supported: [...OIDC_SCOPES],
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'amr', 'sid', ...SCOPE_CLAIMS.profile, ...SCOPE_CLAIMS.email],
      prompt_values_supported: ['none', 'login', 'consent'],
      authorization_response_iss_parameter_supported: true,
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
    };
  }
}
