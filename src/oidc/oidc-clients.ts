import { Injectable } from '@nestjs/common';
import { ownedBy } from '../applications/application-credentials';
import { ApplicationRepository } from '../applications/application.repository';
import type { OidcGrantType } from '../applications/application-oidc';
import { parseAuthorization } from '../common/authorization-header';
import { DomainError } from '../common/errors';
import { isPossibleId } from '../common/ids';
import { OAuthError } from '../common/oauth-error';
import { formField } from './oauth-form';
import type { ApplicationOidcRecord, ApplicationRow } from '../database/schema';

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

/** Who a back-channel request says its client is, and how it proves it, before anything is looked up. */
export interface ClaimedClient {
  id: string;
  method: ClientAuthMethod;
  /** The presented secret; absent for `none`. */
  secret?: string;
}

/**
 * The membership's applications as clients of its OpenID Provider: found by `client_id` (the
 * application id) for the authorization endpoint, authenticated for the back-channel routes. An
 * application without an `oidc` block, inactive, or of another membership is no client.
 */
@Injectable()
export class OidcClients {
  constructor(private readonly applications: ApplicationRepository) {}

  /** The client, or undefined: nothing is authenticated here (the authorization endpoint's check). */
  async find(membershipId: string, clientId: unknown): Promise<OidcClient | undefined> {
    if (typeof clientId !== 'string' || !isPossibleId(clientId)) return undefined;
    return asClient(membershipId, await this.applications.findAnyById(clientId));
  }

  /**
   * Client authentication of a back-channel request (see `claim` and `check`), the application read
   * on its own. The code exchange reads it together with its code instead (OidcTokenEndpoint).
   */
  async authenticate(membershipId: string, request: ClientAuthRequest): Promise<{ client: OidcClient; method: ClientAuthMethod }> {
    const claimed = this.claim(membershipId, request);
    return this.check(membershipId, claimed, await this.application(claimed.id));
  }

  /** The application a client id names, whatever its state; undefined for an id that cannot exist, unread. */
  async application(clientId: string): Promise<ApplicationRow | undefined> {
    return isPossibleId(clientId) ? this.applications.findAnyById(clientId) : undefined;
  }

  /**
   * Reads who the request says its client is: `client_secret_basic`, `client_secret_post`, or `none`
   * for a public client (its `client_id` in the form). More than one method at once, or no
   * client_id: 401 `invalid_client`; a repeated `client_id` or `client_secret` is a malformed
   * request (RFC 6749 3.2), 400 `invalid_request`, as any repeated parameter.
   */
  claim(membershipId: string, request: ClientAuthRequest): ClaimedClient {
    // An issuer id that cannot exist is 404 before anything else (contract "Hostile input"), as discovery answers it.
    if (!isPossibleId(membershipId)) throw new DomainError('MembershipNotFound', 'The membership does not exist');
    const { form } = request;
    const basic = parseAuthorization(request.authorization);
    if (basic?.scheme === 'bearer') throw OAuthError.invalidClient('Client authentication must use Basic or the form');
    const postedSecret = formField(form, 'client_secret');
    const postedId = formField(form, 'client_id');
    if (basic && postedSecret !== undefined) throw OAuthError.invalidClient('Use one client authentication method');
    if (basic) {
      const id = formDecode(basic.applicationId);
      const secret = formDecode(basic.secret);
      // A client_id in the form must name the same client (RFC 6749 leaves it optional).
      if (id === null || secret === null || (postedId !== undefined && postedId !== id)) throw OAuthError.invalidClient();
      return { id, secret, method: 'client_secret_basic' };
    }
    if (postedId === undefined) throw OAuthError.invalidClient('client_id is required');
    if (postedSecret === undefined) return { id: postedId, method: 'none' };
    return { id: postedId, secret: postedSecret, method: 'client_secret_post' };
  }

  /**
   * The claimed client, if `application` (the row its id names, as read) is it: the secret matches
   * (a digest is compared even for no row), or it is a public client for `none`. An unknown client,
   * a wrong secret, a confidential client without its secret: 401 `invalid_client`, one answer for all.
   */
  check(membershipId: string, claimed: ClaimedClient, application: ApplicationRow | undefined): { client: OidcClient; method: ClientAuthMethod } {
    const client = asClient(membershipId, claimed.secret === undefined ? application : ownedBy(application, claimed.secret));
    if (!client || (claimed.method === 'none' && !client.oidc.public)) throw OAuthError.invalidClient();
    return { client, method: claimed.method };
  }
}

/** The application as a client of this membership's issuer, or undefined: none, another membership's, inactive, no `oidc` block. */
function asClient(membershipId: string, application: ApplicationRow | undefined): OidcClient | undefined {
  if (!application || application.membershipId !== membershipId || !application.isActive || !application.oidc) return undefined;
  return { id: application.id, membershipId, name: application.name, oidc: application.oidc };
}

/** Whether the client may use `grant` at the token endpoint (its `grant_types`). */
export function clientMayUse(client: OidcClient, grant: OidcGrantType): boolean {
  return client.oidc.grant_types.includes(grant);
}
