import { Injectable } from '@nestjs/common';
import { OAuthError } from '../common/oauth-error';
import type { OidcAuthorizationCodeRow } from '../database/schema';
import { AuthorizationCodeRepository, type FoundAuthorizationCode } from './authorization-code.repository';
import type { GrantHandler, GrantRequest, ReadWithClient, TokenEndpointResponse } from './grants';
import { requiredFormField, formField } from './oauth-form';
import { OidcClients } from './oidc-clients';
import { OidcTokens } from './oidc-tokens';
import { verifiesS256 } from './pkce';
import { digestOf } from './secrets';

/** The form's code as read with the client: `found` undefined when there is no such code (or no code in the form). */
interface CodeAsRead {
  found: FoundAuthorizationCode | undefined;
}

const invalidGrant = (description = 'The authorization code is not valid'): OAuthError => new OAuthError('invalid_grant', description);

/**
 * `grant_type=authorization_code` (RFC 6749 4.1.3, RFC 7636): the code of this client, for the
 * same redirect_uri, with the verifier of its S256 challenge, within 60 s, once. A second use
 * answers `invalid_grant` and revokes the grant the first use issued (RFC 6749 4.1.2).
 */
@Injectable()
export class AuthorizationCodeGrant implements GrantHandler<CodeAsRead> {
  readonly grantType = 'authorization_code';

  constructor(
    private readonly codes: AuthorizationCodeRepository,
    private readonly clients: OidcClients,
    private readonly tokens: OidcTokens,
  ) {}

  /** The client's application with the form's code, in one round trip (a missing code is refused after authentication). */
  async readWithClient(membershipId: string, clientId: string, form: Readonly<Record<string, unknown>>): Promise<ReadWithClient<CodeAsRead>> {
    const code = form.code;
    if (typeof code !== 'string') return { application: await this.clients.application(clientId), rows: { found: undefined } };
    const read = await this.codes.findWithClient(membershipId, digestOf(code), clientId);
    return { application: read.application, rows: { found: read.code } };
  }

  /** `read`: the code as readWithClient found it (or found none); without it, it is read here. */
  async exchange(request: GrantRequest, read?: CodeAsRead): Promise<TokenEndpointResponse> {
    const { membershipId, client, form } = request;
    const code = requiredFormField(form, 'code');
    const redirectUri = formField(form, 'redirect_uri');
    const verifier = formField(form, 'code_verifier');
    const digest = digestOf(code);
    const { code: found, user } = (read ? read.found : await this.codes.find(membershipId, digest)) ?? {};
    // Another client's code is not this client's to use up, nor to revoke.
    if (!found || found.clientId !== client.id) throw invalidGrant();
    if (found.consumedAt) throw await this.reused(membershipId, found);
    if (found.expiresAt.getTime() <= Date.now()) throw invalidGrant('The authorization code has expired');
    if (redirectUri !== found.redirectUri) throw invalidGrant('redirect_uri does not match the authorization request');
    if (!verifiesS256(verifier, found.codeChallenge)) throw invalidGrant('code_verifier does not match the code_challenge');
    if (!user?.isActive) throw invalidGrant();

    // The issuing statement uses the code up and writes the new record's id on it.
    const issued = await this.tokens.issueForUser({
      membershipId,
      client,
      user,
      session: { id: found.sessionId },
      scopes: found.scopes,
      nonce: found.nonce ?? undefined,
      authTime: found.authTime,
      amr: found.amr,
      resource: found.resource ?? undefined,
      grant: 'authorization_code',
      usesUp: { kind: 'authorization_code', digest },
      metadata: { userAgent: request.userAgent },
    });
    if (issued) return issued.response;
    // Nothing issued: a concurrent exchange used the code first (this one waited for it to commit),
    // or the sign-in session has ended.
    const now = (await this.codes.find(membershipId, digest))?.code;
    if (now?.consumedAt) throw await this.reused(membershipId, now);
    throw invalidGrant('The sign-in session has ended');
  }

  /** A second use of a code (RFC 6749 4.1.2): the grant its first use issued is revoked. */
  private async reused(membershipId: string, code: OidcAuthorizationCodeRow): Promise<OAuthError> {
    if (code.issuedTokenId) await this.tokens.revokeGrant(membershipId, code.issuedTokenId, code.userId, 'authorization_code_reuse');
    return invalidGrant();
  }
}
