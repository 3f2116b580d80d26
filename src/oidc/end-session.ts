import { Injectable } from '@nestjs/common';
import { decodeJwt } from 'jose';
import { FrontChannel } from './front-channel';
import { Issuers } from './issuer';
import { OidcClients } from './oidc-clients';
import type { PageResult } from './page-result';
import { SigningKeys, UnverifiableToken } from './signing-keys';
import { SsoSessions } from './sso-sessions';

/**
 * `GET <issuer>/logout` (OpenID Connect RP-Initiated Logout 1.0): ends the single sign-on session
 * (and with it every token issued in it), clears its cookie, and sends the browser to the
 * client's `post_logout_redirect_uri` when it is one the client registered (exact match) and the
 * client is known from `id_token_hint` or `client_id`; otherwise a signed-out page.
 */
@Injectable()
export class EndSession {
  constructor(
    private readonly ssoSessions: SsoSessions,
    private readonly clients: OidcClients,
    private readonly keys: SigningKeys,
    private readonly issuers: Issuers,
    private readonly frontChannel: FrontChannel,
  ) {}

  async logout(membershipId: string, query: Readonly<Record<string, unknown>>, ssoCookie: string | undefined): Promise<PageResult> {
    const text = (name: string) => (typeof query[name] === 'string' && (query[name]).length <= 4096 ? (query[name]) : undefined);
    const hint = await this.hintClaims(membershipId, text('id_token_hint'));
    const session = await this.ssoSessions.find(membershipId, ssoCookie);
    // A hint naming another user leaves this browser's session alone, its cookie included: the
    // request is not about it (clearing the cookie alone would sign the browser out of a session
    // that lives on).
    const othersSession = session !== undefined && hint !== undefined && hint.sub !== session.user.id;
    if (session && !othersSession) await this.ssoSessions.end(membershipId, session);
    const cookies = othersSession ? [] : [this.frontChannel.ssoCookie(membershipId, null)];

    const clientId = text('client_id') ?? hint?.aud;
    const client = clientId ? await this.clients.find(membershipId, clientId) : undefined;
    const redirect = text('post_logout_redirect_uri');
    if (client && redirect && client.oidc.post_logout_redirect_uris.includes(redirect) && (!hint || hint.aud === client.id)) {
      const url = new URL(redirect);
      const state = text('state');
      if (state !== undefined) url.searchParams.set('state', state);
      return { kind: 'redirect', location: url.toString(), cookies };
    }
    return this.frontChannel.message(membershipId, 200, 'Signed out', 'You are signed out.', { cookies });
  }

  /**
   * The `sub` and `aud` of an ID token this issuer signed. An expired one still names who and for
   * whom (RP-Initiated Logout 1.0 2: the OP SHOULD accept it), so only its signature is required.
   */
  private async hintClaims(membershipId: string, hint: string | undefined): Promise<{ sub?: string; aud?: string } | undefined> {
    if (!hint) return undefined;
    try {
      await this.keys.verify(membershipId, hint, { issuer: this.issuers.of(membershipId), typ: 'JWT' });
    } catch (error) {
      if (!(error instanceof UnverifiableToken) || !error.expired) return undefined;
    }
    const claims = decodeJwt(hint);
    const aud = Array.isArray(claims.aud) ? claims.aud[0] : claims.aud;
    return { sub: claims.sub, aud };
  }
}
