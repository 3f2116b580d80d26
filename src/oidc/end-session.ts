import { Injectable } from '@nestjs/common';
import { FrontChannel } from './front-channel';
import { IdTokenHints, INVALID_HINT } from './id-token-hint';
import { OidcClients } from './oidc-clients';
import type { PageResult } from './page-result';
import { SsoSessions } from './sso-sessions';

/**
 * `GET|POST <issuer>/logout` (OpenID Connect RP-Initiated Logout 1.0): ends the single sign-on session
 * (and with it every token issued in it), clears its cookie, and sends the browser to the
 * client's `post_logout_redirect_uri` when it is one the client registered (exact match) and the
 * client is known from `id_token_hint` or `client_id`; otherwise a signed-out page. An
 * `id_token_hint` this issuer did not sign sends no one anywhere (RP-Initiated Logout 1.0 2: the OP
 * MUST validate that it issued the hint), whatever `client_id` says.
 */
@Injectable()
export class EndSession {
  constructor(
    private readonly ssoSessions: SsoSessions,
    private readonly clients: OidcClients,
    private readonly hints: IdTokenHints,
    private readonly frontChannel: FrontChannel,
  ) {}

  async logout(membershipId: string, query: Readonly<Record<string, unknown>>, ssoCookie: string | undefined): Promise<PageResult> {
    const text = (name: string) => (typeof query[name] === 'string' && (query[name]).length <= 4096 ? (query[name]) : undefined);
    const read = await this.hints.read(membershipId, query.id_token_hint);
    const hint = read === INVALID_HINT ? undefined : read;
    // The browser's session by its cookie; without one (a cross-site POST, a lost cookie) the one the hint's sid names.
    const session =
      (await this.ssoSessions.find(membershipId, ssoCookie)) ??
      (hint?.sid && hint.sub ? await this.ssoSessions.named(membershipId, hint.sid, hint.sub) : undefined);
    // A hint naming another user leaves this browser's session alone, its cookie included: the
    // request is not about it (clearing the cookie alone would sign the browser out of a session
    // that lives on). A hint that is not the issuer's names no one: the session ends as without one.
    const othersSession = session !== undefined && hint !== undefined && hint.sub !== session.user.id;
    if (session && !othersSession) await this.ssoSessions.end(membershipId, session);
    const cookies = othersSession ? [] : [this.frontChannel.ssoCookie(membershipId, null)];
    if (read === INVALID_HINT) {
      return this.frontChannel.message(membershipId, 400, 'Signed out', 'You are signed out. The application asked with an ID token this service did not issue, so you are not sent back to it.', { cookies });
    }

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
}
