import { Injectable } from '@nestjs/common';
import { ApplicationCredentials } from '../applications/application-credentials';
import { ApplicationRepository } from '../applications/application.repository';
import type { OidcGrantType } from '../applications/application-oidc';
import { parseAuthorization } from '../common/authorization-header';
import { DomainError } from '../common/errors';
import { isPossibleId } from '../common/ids';
import { OAuthError } from '../common/oauth-error';
import type { ApplicationOidcRecord } from '../database/schema';

/** A membership's application as an OpenID Provider client. */
export interface OidcClient {
  id: string;
  membershipId: string;
  name: string;
  oidc: ApplicationOidcRecord;
}

/** How a client authenticated at a back-channel route (RFC 6749 2.3, OpenID Connect Core 9). */
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none';

/** The request parts client authentication reads: the Authorization header and the form's fields. */
export interface ClientAuthRequest {
  authorization: string | undefined;
  form: Readonly<Record<string, unknown>>;
}

/** RFC 6749 2.3.1: Basic's id and secret are form-encoded before base64. */
function formDecode(value: string): string | null {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * The membership's applications as clients of its OpenID Provider: found by `client_id` (the
 * application id) for the authorization endpoint, authenticated for the back-channel routes. An
 * application without an `oidc` block, inactive, or of another membership is no client.
 */
@Injectable()
export class OidcClients {
  constructor(
    private readonly applications: ApplicationRepository,
    private readonly credentials: ApplicationCredentials,
  ) {}

  /** The client, or undefined: nothing is authenticated here (the authorization endpoint's check). */
  async find(membershipId: string, clientId: unknown): Promise<OidcClient | undefined> {
    if (typeof clientId !== 'string' || !isPossibleId(clientId)) return undefined;
    const application = await this.applications.findAnyById(clientId);
    if (!application || application.membershipId !== membershipId || !application.isActive || !application.oidc) return undefined;
    return { id: application.id, membershipId, name: application.name, oidc: application.oidc };
  }

  /**
   * Client authentication of a back-channel request: `client_secret_basic`, `client_secret_post`,
   * or `none` for a public client (its `client_id` in the form). More than one method at once, an
   * unknown client, a wrong secret, or a confidential client without its secret: 401
   * `invalid_client`, one answer for all.
   */
  async authenticate(membershipId: string, request: ClientAuthRequest): Promise<{ client: OidcClient; method: ClientAuthMethod }> {
    // An issuer id that cannot exist is 404 before anything else (contract "Hostile input"), as discovery answers it.
    if (!isPossibleId(membershipId)) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    const { form } = request;
    const basic = parseAuthorization(request.authorization);
    if (basic?.scheme === 'bearer') throw OAuthError.invalidClient('Client authentication must use Basic or the form');
    const postedSecret = form.client_secret;
    const postedId = form.client_id;
    if (basic && postedSecret !== undefined) throw OAuthError.invalidClient('Use one client authentication method');
    if (basic) {
      const id = formDecode(basic.applicationId);
      const secret = formDecode(basic.secret);
      // A client_id in the form must name the same client (RFC 6749 leaves it optional).
      if (id === null || secret === null || (postedId !== undefined && postedId !== id)) throw OAuthError.invalidClient();
      return { client: await this.withSecret(membershipId, id, secret), method: 'client_secret_basic' };
    }
    if (typeof postedId !== 'string') throw OAuthError.invalidClient('client_id is required');
    if (postedSecret !== undefined) {
      if (typeof postedSecret !== 'string') throw OAuthError.invalidClient();
      return { client: await this.withSecret(membershipId, postedId, postedSecret), method: 'client_secret_post' };
    }
    const client = await this.find(membershipId, postedId);
    if (!client || !client.oidc.public) throw OAuthError.invalidClient();
    return { client, method: 'none' };
  }

  private async withSecret(membershipId: string, clientId: string, secret: string): Promise<OidcClient> {
    const application = await this.credentials.withSecret(clientId, secret);
    if (!application || application.membershipId !== membershipId || !application.isActive || !application.oidc) {
      throw OAuthError.invalidClient();
    }
    return { id: application.id, membershipId, name: application.name, oidc: application.oidc };
  }
}

/** Whether the client may use `grant` at the token endpoint (its `grant_types`). */
export function clientMayUse(client: OidcClient, grant: OidcGrantType): boolean {
  return client.oidc.grant_types.includes(grant);
}
